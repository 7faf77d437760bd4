/* Node 1 returns from main without iso_deinit, which leaves the job as iso_deinit would:
 * it waits at the end barrier. Node 0 never comes (it polls forever), so that leave fails
 * once the barrier times out, and the failure must not be lost: node 1 says so and exits
 * with status 1, and node 0's poll loop ends too. */
#include <iso/iso.h>

int main(void) {
  iso_init();
  iso_barrier();
  if (NODEID == 1) return 0;
  while (1) iso_poll();
}
