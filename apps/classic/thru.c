/*
 * thru - isotach throughput test program
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

#include "prof.h"

#define NUM 10000

/*
 * number of pages to touch
 */
#define Numpages 7

/*
 * jumps are page sized
 */
#define JUMPSIZE 1024

/*
 * isochron size
 */
#define SIZE 16

void do_write (void)
{
    int i;
    static int k = 0;
    static int j = 0;

    iso_start ();
    for (i=0; i<SIZE; i++) {
        iso_write32 (k*JUMPSIZE, j++);
        k++;
        k = k%NUMPAGES;
    }
    iso_end ();
}

int main (void)
{
    int i,j;
    double us;
    struct timeval start, stop;

    iso_init ();

    for (j=0; j<500; j++) {

        gettimeofday (&start, NULL);

        for (i=0; i<NUM; i++) {
            do_write();
        }

        gettimeofday (&stop, NULL);
        subtracttime (&stop, &start);
        us = (double)stop.tv_sec *1e6 + (double)stop.tv_usec;
        printf ("%d isochrons issued in %fus, %f us per isochron\n",
            NUM, us, us/NUM);
    }

    printf ("\n\nall done\n");
    fflush (stdout);

    while (1) iso_poll ();

    iso_deinit();
}
