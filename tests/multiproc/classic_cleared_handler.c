/* Regehr report, B.5: a message for a handler that is not set ends the job with a message.
 * Every node sets handler 5 and clears it again (iso_set_handler returns what was set
 * before); node 0 then sends to handler 5 on node 1, which must fail the job naming the
 * handler and the node, instead of dropping the message. */
#include <iso/iso.h>
#include <stdio.h>

static void handler(int sender, void* data, int length) {
  (void)data;
  printf("handler ran: %d bytes from node %d\n", length, sender);
}

int main(void) {
  iso_init();
  if (iso_set_handler(5, handler) != NULL || iso_set_handler(5, NULL) != handler) {
    printf("iso_set_handler did not return the previous handler\n");
    return 1;
  }
  iso_barrier();
  if (NODEID == 0) {
    iso_start();
    if (iso_send_msg(1, 5, "x", 1) != ISO_SUCCESS) printf("send: %s\n", iso_last_error());
    iso_end();
  }
  if (iso_barrier() != ISO_SUCCESS) printf("barrier %d: %s\n", NODEID, iso_last_error());
  iso_deinit();
  return 0;
}
