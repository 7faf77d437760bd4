/* prof.h: the timing helpers lat.c and thru.c include. The Regehr report does not print
 * this header (its figures came from counters inside the instrumented isotach library), so
 * this is a stand-in with the names the listings use: the per-read and per-message timing
 * records, a fast timer and timeval subtraction. The library fills in none of the
 * handler-side times here, so those columns of lat's report are zero.
 */
#ifndef CLASSIC_PROF_H_
#define CLASSIC_PROF_H_

#include <stdlib.h> /* lat.c calls exit() without including it */
#include <sys/time.h>
#include <time.h>

#define REPS 100 /* reads per timing round */

struct snd_timer {
  long long start, issued, handler_start, handler_finish, finish, chr_start, chr_finish;
};
struct rcv_timer {
  long long msg_handler_start, msg_handler_finish, mark_handler_start, mark_handler_finish,
      send_done;
};

/* Defined here: each listing is one file. */
struct snd_timer snd_stats[REPS];
struct rcv_timer rcv_stats[REPS];
int snd_stat_num;
int rcv_stat_num;

/* fast_timer: nanoseconds of a monotonic clock into *t. */
static inline void fast_timer(long long* t) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  *t = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* subtracttime: *a -= *b. */
static inline void subtracttime(struct timeval* a, struct timeval* b) {
  a->tv_sec -= b->tv_sec;
  a->tv_usec -= b->tv_usec;
  if (a->tv_usec < 0) {
    a->tv_usec += 1000000;
    a->tv_sec -= 1;
  }
}

#endif /* CLASSIC_PROF_H_ */
