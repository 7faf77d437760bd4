/* Node 0 polls forever, as classic programs do. Node 1 leaves without a word: it ends its
 * process with _exit(0) (no exit hook runs, so it never leaves the job), or it stops itself
 * with SIGSTOP. Node 0's poll loop must end anyway, saying which node is gone. */
#include <iso/iso.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const int stop = argc > 1 && strcmp(argv[1], "stop") == 0;
  iso_init();
  iso_barrier();
  if (NODEID == 1) {
    if (stop) raise(SIGSTOP);
    _exit(0);
  }
  while (1) iso_poll();
}
