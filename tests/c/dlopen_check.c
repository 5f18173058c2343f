/*
 * dlopen_check LIBRARY SYMBOL...
 *
 * Loads LIBRARY as the JVM's System.load does (dlopen, every relocation resolved at once) and
 * looks up each SYMBOL in it. Built for every platform the hrts jar carries a JNI library for
 * (gradle/jni-platforms.gradle) and run by PackedLibrariesTest, under qemu-user for a foreign
 * platform: a library that loads here has its dependencies and relocations right for that
 * platform.
 *
 * Prints "dlopen: N of N symbols found in LIBRARY" and exits 0 when the library loads and every
 * symbol is there; otherwise says what failed and exits 1 (2 for a usage error).
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: dlopen_check LIBRARY [SYMBOL...]\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("dlopen: cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  int found = 0;
  for (int i = 2; i < argc; i++) {
    dlerror();
    void *sym = dlsym(lib, argv[i]);
    const char *err = dlerror();
    if (sym && !err) {
      found++;
    } else {
      printf("dlopen: %s: symbol %s not found: %s\n", argv[1], argv[i], err ? err : "null address");
    }
  }
  printf("dlopen: %d of %d symbols found in %s\n", found, argc - 2, argv[1]);
  return found == argc - 2 ? 0 : 1;
}
