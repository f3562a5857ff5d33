/* A crash reporter for the device runs, where there is no gdb: LD_PRELOAD it and a SIGSEGV
   prints the native frames (module+offset; resolve them with addr2line -e <module> on the same
   build) before the process exits with 139. Built by run_device_checks.sh with the image's gcc. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

static void report(int sig) {
  static const char head[] = "=== SIGSEGV: native frames\n";
  void* frames[64];
  int n = backtrace(frames, 64);
  if (write(2, head, sizeof(head) - 1) < 0) _exit(128 + sig);
  backtrace_symbols_fd(frames, n, 2);
  _exit(128 + sig);
}

__attribute__((constructor)) static void install(void) {
  struct sigaction sa = {0};
  sa.sa_handler = report;
  sigaction(SIGSEGV, &sa, 0);
}
