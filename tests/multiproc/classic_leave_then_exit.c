/* Every node leaves the job (iso_deinit); node 1 then ends its process at once, without its
 * exit hooks (_exit), while the others may still be finishing their own leave. A node that
 * left is no failure however the ends interleave: the job ends quietly with status 0. */
#include <iso/iso.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  iso_init();
  const int me = NODEID;
  if (iso_barrier() != ISO_SUCCESS) return 1;
  const int left = iso_deinit();
  if (left != ISO_SUCCESS) {
    fprintf(stderr, "node %d: iso_deinit returned %d\n", me, left);
    return 1;
  }
  if (me == 1) _exit(0);
  printf("node %d left\n", me);
  return 0;
}
