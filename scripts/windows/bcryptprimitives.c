/*
 * A stand-in for Windows 10's bcryptprimitives.dll, for Wine releases older than
 * 9.0 (Debian 12's wine is 8.0), which lack it. Rust's standard library (1.78 and
 * later) imports ProcessPrng from it for HashMap keys and random numbers; without
 * the DLL no Rust program starts under such a Wine. Installed only into the test's
 * own Wine prefix by scripts/windows/wine-env.sh, never shipped with hrts.
 *
 * ProcessPrng is the system RNG; RtlGenRandom (advapi32's SystemFunction036), which
 * every Wine has, is the same generator behind an older name.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
