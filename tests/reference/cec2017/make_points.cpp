// Evaluates the official CEC 2017 code (cec17_test_fast_pow.cpp of
// P-N-Suganthan/CEC2017-BoundContrained, CEC17_fast_pow-C++.zip) at given points.
//
// Build (make_reference.py does it):
//   g++ -O2 -I <CEC17_fast_pow folder> make_points.cpp -o make_points
// Run from the CEC17_fast_pow folder (the official code reads input_data/ from the working
// directory):  make_points < points.txt > values.txt
//
// Input: lines "func dim x_0 ... x_{dim-1}". Output: one line per point,
//   "func dim raw error" with raw = cec17_test_func's value (error + 100 func) and error = the same
// official basic, hybrid or composition function called as cec17_test_func's switch calls it, without
// the "+= 100 func" (so values near the optimum keep their digits), both printed with %.17g.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "cec17_test_fast_pow.cpp"

// The globals the official file declares extern.
double *OShift, *M, *y, *z, *x_bound;
int ini_flag = 0, n_flag, func_flag, *SS;

// cec17_test_func's switch without the bias (the official functions, the official arguments).
static double error_value(double *x, int nx, int func)
{
    double f = 0.0;
    switch (func) {
    case 1: bent_cigar_func(x, &f, nx, OShift, M, 1, 1); break;
    case 3: zakharov_func(x, &f, nx, OShift, M, 1, 1); break;
    case 4: rosenbrock_func(x, &f, nx, OShift, M, 1, 1); break;
    case 5: rastrigin_func(x, &f, nx, OShift, M, 1, 1); break;
    case 6: schaffer_F7_func(x, &f, nx, OShift, M, 1, 1); break;
    case 7: bi_rastrigin_func(x, &f, nx, OShift, M, 1, 1); break;
    case 8: step_rastrigin_func(x, &f, nx, OShift, M, 1, 1); break;
    case 9: levy_func(x, &f, nx, OShift, M, 1, 1); break;
    case 10: schwefel_func(x, &f, nx, OShift, M, 1, 1); break;
    case 11: hf01(x, &f, nx, OShift, M, SS, 1, 1); break;
    case 12: hf02(x, &f, nx, OShift, M, SS, 1, 1); break;
    case 13: hf03(x, &f, nx, OShift, M, SS, 1, 1); break;
    case 14: hf04(x, &f, nx, OShift, M, SS, 1, 1); break;
    case 15: hf05(x, &f, nx, OShift, M, SS, 1, 1); break;
    case 16: hf06(x, &f, nx, OShift, M, SS, 1, 1); break;
    case 17: hf07(x, &f, nx, OShift, M, SS, 1, 1); break;
    case 18: hf08(x, &f, nx, OShift, M, SS, 1, 1); break;
    case 19: hf09(x, &f, nx, OShift, M, SS, 1, 1); break;
    case 20: hf10(x, &f, nx, OShift, M, SS, 1, 1); break;
    case 21: cf01(x, &f, nx, OShift, M, 1); break;
    case 22: cf02(x, &f, nx, OShift, M, 1); break;
    case 23: cf03(x, &f, nx, OShift, M, 1); break;
    case 24: cf04(x, &f, nx, OShift, M, 1); break;
    case 25: cf05(x, &f, nx, OShift, M, 1); break;
    case 26: cf06(x, &f, nx, OShift, M, 1); break;
    case 27: cf07(x, &f, nx, OShift, M, 1); break;
    case 28: cf08(x, &f, nx, OShift, M, 1); break;
    case 29: cf09(x, &f, nx, OShift, M, SS, 1); break;
    case 30: cf10(x, &f, nx, OShift, M, SS, 1); break;
    default: fprintf(stderr, "no function %d\n", func); exit(1);
    }
    return f;
}

int main()
{
    int func, nx;
    while (scanf("%d %d", &func, &nx) == 2) {
        double *x = (double *)malloc(nx * sizeof(double));
        for (int i = 0; i < nx; i++)
            if (scanf("%lf", &x[i]) != 1) { fprintf(stderr, "short point\n"); return 1; }
        double raw;
        cec17_test_func(x, &raw, nx, 1, func);  // loads the data of (func, nx) when they change
        double err = error_value(x, nx, func);
        printf("%d %d %.17g %.17g\n", func, nx, raw, err);
        free(x);
    }
    return 0;
}
