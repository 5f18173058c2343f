/*
 * dlopen_check LIBRARY SYMBOL...
 *
 * Loads LIBRARY as the JVM's System.load does (dlopen, every relocation resolved at once; on
 * Windows LoadLibrary) and looks up each SYMBOL in it. Built for every platform the hrts jar
 * carries a JNI library for (gradle/jni-platforms.gradle) and run by PackedLibrariesTest, under
 * qemu-user for a foreign platform and Wine for Windows: a library that loads here has its
 * dependencies and relocations right for that platform.
 *
 * Prints "dlopen: N of N symbols found in LIBRARY" and exits 0 when the library loads and every
 * symbol is there; otherwise says what failed and exits 1 (2 for a usage error).
 */
#include <stdio.h>

#ifdef _WIN32
#include <windows.h>

static void *load(const char *path, char *why, size_t n) {
  HMODULE lib = LoadLibraryA(path);
  if (!lib) {
    snprintf(why, n, "LoadLibrary error %lu", (unsigned long)GetLastError());
  }
  return (void *)lib;
}

static int has(void *lib, const char *name, char *why, size_t n) {
  if (GetProcAddress((HMODULE)lib, name)) {
    return 1;
  }
  snprintf(why, n, "GetProcAddress error %lu", (unsigned long)GetLastError());
  return 0;
}
#else
#include <dlfcn.h>

static void *load(const char *path, char *why, size_t n) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, n, "%s", dlerror());
  }
  return lib;
}

static int has(void *lib, const char *name, char *why, size_t n) {
  dlerror();
  void *sym = dlsym(lib, name);
  const char *err = dlerror();
  if (sym && !err) {
    return 1;
  }
  snprintf(why, n, "%s", err ? err : "null address");
  return 0;
}
#endif

int main(int argc, char **argv) {
  char why[512];
  if (argc < 2) {
    fprintf(stderr, "usage: dlopen_check LIBRARY [SYMBOL...]\n");
    return 2;
  }
  void *lib = load(argv[1], why, sizeof why);
  if (!lib) {
    printf("dlopen: cannot load %s: %s\n", argv[1], why);
    return 1;
  }
  int found = 0;
  for (int i = 2; i < argc; i++) {
    if (has(lib, argv[i], why, sizeof why)) {
      found++;
    } else {
      printf("dlopen: %s: symbol %s not found: %s\n", argv[1], argv[i], why);
    }
  }
  printf("dlopen: %d of %d symbols found in %s\n", found, argc - 2, argv[1]);
  return found == argc - 2 ? 0 : 1;
}
