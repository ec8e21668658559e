/* A stand-in for an author's program that prints its own lines (read by a pattern): random search
   on the sphere, "best <error> fes <n> time <s>" every 500 evaluations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    int dim = 10, fes = 1000;
    unsigned seed = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-d")) dim = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n")) fes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-s")) seed = (unsigned) strtoul(argv[i + 1], NULL, 10);
    }
    srand(seed);
    clock_t start = clock();
    double best = 1e300;
    for (int e = 1; e <= fes; e++) {
        double f = 0.0;
        for (int j = 0; j < dim; j++) {
            double v = -5.0 + 10.0 * rand() / (double) RAND_MAX;
            f += v * v;
        }
        if (f < best) best = f;
        if (e % 500 == 0 || e == fes)
            printf("best %.17g fes %d time %.6f\n", best, e, (double) (clock() - start) / CLOCKS_PER_SEC);
    }
    return 0;
}
