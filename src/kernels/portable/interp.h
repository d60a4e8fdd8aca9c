/* interp.h — the interpolation kernels that Resize (resize.c) and GridSample (vision.c) share.
 * Layer: kernels/portable (internal). */
#ifndef KILN_KERNELS_PORTABLE_INTERP_H
#define KILN_KERNELS_PORTABLE_INTERP_H

#include <math.h>

/* Keys' cubic convolution kernel at distance x with coefficient a (ONNX's cubic_coeff_a,
   -0.75 in GridSample and PyTorch; -0.5 in TensorFlow): the weight of a tap x pixels away. */
static inline double kiln_interp_cubic_weight(double x, double a)
{
    x = fabs(x);
    if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
}

#endif
