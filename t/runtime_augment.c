/*
 * runtime_augment.c: tests of the image augmentation (runtime/train/augment.c):
 * the crop with zero padding and the flip against hand-computed images,
 * and the distribution of the drawn offsets and flips.
 */
#include <string.h>

#include "bnn.h"
#include "tap.h"

/* Does got equal want (n floats) exactly? */
static int same(const float *got, const float *want, int n)
{
	return memcmp(got, want, (size_t)n * sizeof *got) == 0;
}

static void test_image(void)
{
	/* One channel of 3 rows by 4 columns:
	 *    1  2  3  4
	 *    5  6  7  8
	 *    9 10 11 12 */
	static const float img[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	/* dy = 1, dx = -1: pixel (i, j) is (i + 1, j - 1), 0 outside:
	 *    0  5  6  7
	 *    0  9 10 11
	 *    0  0  0  0 */
	static const float shifted[12] = { 0, 5, 6, 7, 0, 9, 10, 11, 0, 0, 0, 0 };
	/* the same, flipped: pixel (i, j) is (i + 1, 3 - j - 1):
	 *    7  6  5  0
	 *   11 10  9  0
	 *    0  0  0  0 */
	static const float flipped[12] = { 7, 6, 5, 0, 11, 10, 9, 0, 0, 0, 0, 0 };
	/* no shift, flipped: each row mirrored */
	static const float mirror[12] = { 4, 3, 2, 1, 8, 7, 6, 5, 12, 11, 10, 9 };
	static const float padding[12] = { 0 };
	/* one channel of 3 rows of 4 pixels: the augmentation, the result */
	static const struct {
		bnn_augmentation aug;
		const float *want;
		const char *what;
	} cases[] = {
		{ { 0, 0, 0 }, img, "offset (0, 0) without flip leaves the image" },
		{ { 1, -1, 0 },
		  shifted,
		  "offset (1, -1): shifted up and right, zeros where it ran out" },
		{ { 1, -1, 1 },
		  flipped,
		  "offset (1, -1) and flip: the crop, then each row mirrored" },
		{ { 0, 0, 1 }, mirror, "flip alone mirrors every row" },
		{ { 3, 0, 0 }, padding, "an offset of the full height leaves only padding" },
	};
	const bnn_image_shape one = { 1, 3, 4 }, two = { 2, 3, 4 }, none = { 0, 3, 4 };
	const bnn_augmentation crop_flip = { 1, -1, 1 }, shift = { 1, 1, 1 };
	float x[24], scratch[24], want[24];
	int i;

	for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
		memcpy(x, img, sizeof img);
		bnn_augment_image(x, &one, &cases[i].aug, scratch);
		ok(same(x, cases[i].want, 12), "%s", cases[i].what);
	}

	/* Two channels move together: the second is the first plus 100. */
	for (i = 0; i < 12; i++) {
		x[i] = img[i];
		x[12 + i] = img[i] + 100;
		want[i] = flipped[i];
		want[12 + i] = flipped[i] == 0 ? 0 : flipped[i] + 100;
	}
	bnn_augment_image(x, &two, &crop_flip, scratch);
	ok(same(x, want, 24), "two channels get the same crop and flip");
	bnn_augment_image(x, &none, &shift, scratch);
	ok(same(x, want, 24), "no channels: nothing happens");
}

static void test_draw(void)
{
	enum {
		N = 70000
	};
	long count[5][5], flips = 0;
	int i, j, in_range = 1, all_seen = 1, same_seed = 1;
	bnn_augmentation g, g2;
	bnn_rng rng, a, b;

	/* pad 2: dy and dx uniform on -2..2 (25 cells of 2,800 expected
	 * each, standard deviation 52), flips half the time (35,000,
	 * standard deviation 132). */
	memset(count, 0, sizeof count);
	bnn_rng_seed(&rng, 3);
	for (i = 0; i < N; i++) {
		bnn_augment_draw(&rng, 2, 1, &g);
		if (g.dy < -2 || g.dy > 2 || g.dx < -2 || g.dx > 2 ||
		    (g.flip != 0 && g.flip != 1)) {
			in_range = 0;
			continue;
		}
		count[g.dy + 2][g.dx + 2]++;
		flips += g.flip;
	}
	ok(in_range, "offsets lie in [-pad, pad] and the flip is 0 or 1");
	for (i = 0; i < 5; i++)
		for (j = 0; j < 5; j++)
			if (count[i][j] < 2800 - 5 * 53 || count[i][j] > 2800 + 5 * 53)
				all_seen = 0;
	ok(all_seen, "each of the 25 offsets is drawn 2800 times within 5 standard deviations");
	ok(flips > 35000 - 5 * 133 && flips < 35000 + 5 * 133,
	   "the flip comes up half the time (%ld of %d)", flips, N);

	bnn_rng_seed(&rng, 3);
	bnn_augment_draw(&rng, 0, 0, &g);
	ok(g.dy == 0 && g.dx == 0 && g.flip == 0, "pad 0 without flip draws the identity");

	bnn_rng_seed(&a, 9);
	bnn_rng_seed(&b, 9);
	for (i = 0; i < 100; i++) {
		bnn_augment_draw(&a, 4, 1, &g);
		bnn_augment_draw(&b, 4, 1, &g2);
		same_seed = same_seed && g.dy == g2.dy && g.dx == g2.dx && g.flip == g2.flip;
	}
	ok(same_seed, "the same seed draws the same augmentations");
}

int main(void)
{
	test_image();
	test_draw();
	return tap_done();
}
