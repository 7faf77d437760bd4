/*
 * philo - isotach dining philosophers
 */

#include <stdio.h>
#include <string.h>
#include <malloc.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>
#include <sys/types.h>

#include <iso/iso.h>

#define REPS 1000

/*
 * slow things down for demo purposes
 */
void delay(int c)
{
    int x = 0, i;

    int d = (lrand48())%15000 + 15000;
    if (c == 0) d = d/2;

    for (i=0; i<d; i++) {
        usleep (10000);
        iso_poll ();
        if (c) if (x++%1000 == 0) {
            printf (".");
            fflush (stdout);
        }
    }
    printf ("\n");
}

int left, right;

int main (void)
{
    struct iso_var *forks;
    int i, val1, val2;

    srand48 (time (NULL));

    iso_init ();

    forks = (struct iso_var *) malloc (sizeof(struct iso_var)*NUMNODES);

    printf ("I'm %d, there are %d philosophers\n", NODEID, NUMNODES);

    left = NODEID;
    right = (NODEID+1)%NUMNODES;

    if (NODEID == 0) {
        iso_start();
        iso_write32 (left+1024, NODEID*1000);
        iso_write32 (right+1024, NODEID*1000+1);
        iso_end();
    }

#ifdef VERBOSE_PH
    delay (0);
#endif

    fflush (stdout);
    fflush (stderr);

    for (i=0; i<REPS; i++) {
#ifdef VERBOSE_PH
        printf ("issuing pickup isochron\n");
        fflush (stdout);
#endif
        iso_start ();
        iso_read32 (left+1024, &forks[left]);
        iso_read32 (right+1024, &forks[right]);
        iso_sched (left+1024);
        iso_sched (right+1024);
        iso_end ();

#ifdef VERBOSE_PH
        printf ("waiting on forks\n");
        fflush (stdout);
#endif
        val1 = read_iso_var (&forks[left]);
        val2 = read_iso_var (&forks[right]);

#ifdef VERBOSE_PH
        printf ("got forks  val1 = %d  val2 = %d\n", val1, val2);
        printf ("EATING");
        fflush (stdout);
#endif

#ifdef VERBOSE_PH
        delay (1);
#endif

#ifdef VERBOSE_PH
        printf ("issuing release isochron\n");
        fflush (stdout);
#endif
        iso_start ();
        iso_assign (left+1024, val1+10);
        iso_assign (right+1024, val2+10);
        iso_end ();
#ifdef VERBOSE_PH
        printf ("forks released\n");
        printf ("THINKING");
#endif
        fflush (stdout);

#ifdef VERBOSE_PH
        delay (0);
#endif
    }

    printf ("\n\nall done\n");
    fflush (stdout);

    iso_deinit ();
}
