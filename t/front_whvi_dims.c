/* front_whvi_dims.c: WHVI's padding and stacking (WHVI paper, Algorithm 1)
 * and the parameter counts that follow, against values worked out by hand. */
#include "ops.h"
#include "tap.h"

static void check_dims(long din, long dout, long d, long padding, long stack)
{
	struct whvi_dims w;
	whvi_dims(din, dout, &w);
	is_int(w.d, d, "%ld x %ld: D", dout, din);
	is_int(w.padding, padding, "%ld x %ld: padding", dout, din);
	is_int(w.stack, stack, "%ld x %ld: stack", dout, din);
	is_int(w.dout, d * stack, "%ld x %ld: padded outputs", dout, din);
}

int main(void)
{
	check_dims(512, 512, 512, 0, 1); /* square, power of two: no padding */
	check_dims(128, 128, 128, 0, 1);
	check_dims(784, 300, 1024, 240, 1); /* 784 -> 1024 */
	check_dims(300, 100, 512, 212, 1);
	check_dims(100, 10, 128, 28, 1);
	check_dims(1, 128, 1, 0, 128); /* a column: 128 stacked 1x1 blocks */
	check_dims(64, 300, 64, 0, 5); /* ceil(300 / 64) = 5 */
	check_dims(64, 256, 64, 0, 4); /* exact multiple */
	check_dims(3, 8, 4, 1, 2);

	/* 4D per block; bias mean-field: 2 per unit */
	is_int(whvi_params(128, 128, 0, 1), 4 * 128 + 2 * 128, "128x128 with bias");
	is_int(whvi_params(128, 128, 0, 0), 512, "128x128 without bias");
	is_int(whvi_params(784, 300, 0, 1), 4 * 1024 + 600, "784 -> 300");
	is_int(whvi_params(64, 300, 0, 0), 5 * 4 * 64, "64 -> 300: five blocks");
	/* a planar flow adds u, w (D each) and a bias per block */
	is_int(whvi_params(128, 128, 10, 0), 512 + 10 * 257, "128x128 with 10 flows");
	is_int(whvi_params(64, 300, 2, 1), 5 * (256 + 2 * 129) + 600, "64 -> 300 with 2 flows");
	return tap_done();
}
