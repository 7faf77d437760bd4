/*
 * lat - isotach latency test program
 */

#include <stdio.h>
#include <string.h>
#include <malloc.h>
#include <sys/time.h>
#include <sys/types.h>
#include <iso/iso.h>

#include "prof.h"

#define COUNT 50

/*
 * do some reads, gathering timing info
 */
void time_reads (int loc, int num)
{
    int j;
    struct iso_var val;

    for (snd_stat_num=0; snd_stat_num<num; snd_stat_num++) {
        fast_timer (&snd_stats[snd_stat_num].start);
        iso_start ();
        iso_read32 (loc,&val);
        iso_end ();
        fast_timer (&snd_stats[snd_stat_num].issued);
        j = read_iso_var (&val);
        fast_timer (&snd_stats[snd_stat_num].finish);
    }
}

/*
 * do some reads without timing
 */
void do_reads (int loc, int num)
{
    int i, j;
    struct iso_var val;

    for (i=0; i<num; i++) {
        iso_start ();
        iso_read32 (loc,&val);
        iso_end ();
        j = read_iso_var (&val);
        if (j != 7777) {
            printf ("oops\n");
            exit (1);
        }
    }
}

void handler (int id, void *data, int len)
{
    int i;
    struct rcv_timer rcv;

    for (i=0; i<REPS; i++) {
        printf ("%d:  hfinish:%lld  mstart:%lld  mfinish:%lld  done:%lld  total:%lld\n", i,
                   rcv_stats[i].msg_handler_finish -
    rcv_stats[i].msg_handler_start,
    rcv_stats[i].mark_handler_start -
    rcv_stats[i].msg_handler_finish,
    rcv_stats[i].mark_handler_finish -
    rcv_stats[i].mark_handler_start,
    rcv_stats[i].send_done -
    rcv_stats[i].mark_handler_finish,
    rcv_stats[i].send_done -
    rcv_stats[i].msg_handler_start
    );
}

rcv.msg_handler_start = 0;
rcv.msg_handler_finish = 0;
rcv.mark_handler_start = 0;
rcv.mark_handler_finish = 0;
rcv.send_done = 0;

for (i=0; i<REPS; i++) if (i != 2) { /* kludge */
    rcv.msg_handler_start +=
        rcv_stats[i].msg_handler_finish -
        rcv_stats[i].msg_handler_start;
    rcv.msg_handler_finish +=
        rcv_stats[i].mark_handler_start -
        rcv_stats[i].msg_handler_finish;
    rcv.mark_handler_start +=
        rcv_stats[i].mark_handler_finish -
        rcv_stats[i].mark_handler_start;
    rcv.mark_handler_finish +=
        rcv_stats[i].send_done -
        rcv_stats[i].mark_handler_finish;
    rcv.send_done +=
        rcv_stats[i].send_done -
        rcv_stats[i].msg_handler_start;
}

printf ("average:  hfinish:%lld  mstart:%lld  mfinish:%lld  done:%lld  total:%lld\n",
rcv.msg_handler_start/(REPS-1),
rcv.msg_handler_finish/(REPS-1),
    rcv.mark_handler_start/(REPS-1),
    rcv.mark_handler_finish/(REPS-1),
    rcv.send_done/(REPS-1));

    printf ("rcv_stat_num = %d\n", rcv_stat_num);

    iso_deinit();
}

int main (void)
{
    char *buf;
    struct timeval start, stop;
    double us;
    int i;
    struct snd_timer snd;

    buf = (char *)malloc(128);
    bzero (buf, 128);

    iso_init();
    iso_set_handler (22, handler);

    printf ("I'm node %d\n", NODEID);

    if (NODEID != 1) while (1) iso_poll();

    iso_start();
    iso_write32(10, 7777);
    iso_end();

    for (i=0; i<COUNT; i++) {

        gettimeofday (&start, NULL);

        if (i <= COUNT/2) {
            printf ("no timing ");
            do_reads (10, REPS);
        } else {
            printf ("timing ");
    time_reads (10, REPS);
}

gettimeofday (&stop, NULL);

subtracttime (&stop, &start);
us = (double)stop.tv_sec *1e6 + (double)stop.tv_usec;

printf ("executed %d remote reads in %f usecs; %f us/read\n",
        REPS, us, us/REPS);
}

for (i=0; i<REPS; i++) {
    printf ("%d iss:%lld hstart:%lld hfinish:%lld finish:%lld total:%lld schr:%lld fchr:%lld\n", i,
            snd_stats[i].issued - snd_stats[i].start,
            snd_stats[i].handler_start - snd_stats[i].issued,
            snd_stats[i].handler_finish - snd_stats[i].handler_start,
            snd_stats[i].finish - snd_stats[i].handler_finish,
            snd_stats[i].finish - snd_stats[i].start,
            snd_stats[i].chr_start - snd_stats[i].start,
            snd_stats[i].chr_finish - snd_stats[i].chr_start
    );
}

snd.start = 0;
snd.issued = 0;
snd.handler_start = 0;
snd.handler_finish = 0;
snd.finish = 0;
snd.chr_start = 0;
snd.chr_finish = 0;

for (i=0; i<REPS; i++) {
    snd.start +=
        snd_stats[i].issued -
        snd_stats[i].start;
    snd.issued +=
        snd_stats[i].handler_start -
        snd_stats[i].issued;
    snd.handler_start +=
        snd_stats[i].handler_finish -
        snd_stats[i].handler_start;
    snd.handler_finish +=
        snd_stats[i].finish -
        snd_stats[i].handler_finish;
    snd.finish +=
        snd_stats[i].finish -
        snd_stats[i].start;
    snd.chr_start +=
        snd_stats[i].chr_start -
        snd_stats[i].start;
    snd.chr_finish +=
        snd_stats[i].chr_finish -
        snd_stats[i].chr_start;
}

printf ("\naverage:  iss:%lld  hstart:%lld  hfinish:%lld  finish:%lld  total:%lld  schr:%lld  fchr:%lld\n",
    snd.start/REPS,
    snd.issued/REPS,
    snd.handler_start/REPS,
    snd.handler_finish/REPS,
    snd.finish/REPS,
    snd.chr_start/REPS,
    snd.chr_finish/REPS);

printf ("snd_stat_num = %d\n", snd_stat_num);

iso_start();
iso_send_msg (0, 22, &start, 1);
iso_end();
}
