/*
 * augment.c: image data augmentation for training, a random crop with
 * zero padding and a random horizontal flip, as in the VOGN paper's image
 * experiments (Osawa et al., section 3, "Data Augmentation": random
 * cropping of padded images and horizontal flipping; there ρ, the factor
 * N ← ρN of Algorithm 1, accounts for the larger effective data set).
 *
 * An example is an image of C channels of H×W pixels, channel after
 * channel, rows in order (NCHW, the layout of the DSL's conv2d).  The crop
 * pads the image with `pad` zero pixels on every side and cuts an H×W
 * window at a uniformly random offset: pixel (i, j) of the result is
 * pixel (i + dy, j + dx) of the original, or 0 outside it, with dy and dx
 * uniform in [−pad, pad].  The flip, with probability ½, mirrors every row
 * after the crop.  All channels move together.  The trainer draws the
 * offsets and the flip from its own stream, so a seed gives the same
 * augmented minibatches on every run (bnn_train, options crop_pad and
 * flip).
 */
#include <string.h>

#include "bnn.h"

void bnn_augment_image(float *x, const bnn_image_shape *shape, const bnn_augmentation *aug,
                       float *scratch)
{
	long c, i, j, height = shape->height, width = shape->width, plane = height * width;

	if (shape->channels < 1 || height < 1 || width < 1)
		return;
	memcpy(scratch, x, (size_t)(shape->channels * plane) * sizeof *x);
	for (c = 0; c < shape->channels; c++) {
		const float *src = scratch + c * plane;
		float *dst = x + c * plane;
		for (i = 0; i < height; i++)
			for (j = 0; j < width; j++) {
				long si = i + aug->dy;
				long sj = (aug->flip ? width - 1 - j : j) + aug->dx;
				int inside = si >= 0 && si < height && sj >= 0 && sj < width;
				dst[i * width + j] = inside ? src[si * width + sj] : 0.0f;
			}
	}
}

void bnn_augment_draw(bnn_rng *rng, long pad, int flip, bnn_augmentation *out)
{
	uint64_t span = (uint64_t)(2 * (pad > 0 ? pad : 0) + 1);

	out->dy = (long)bnn_rng_below(rng, span) - (pad > 0 ? pad : 0);
	out->dx = (long)bnn_rng_below(rng, span) - (pad > 0 ? pad : 0);
	out->flip = flip ? (int)bnn_rng_below(rng, 2) : 0;
}
