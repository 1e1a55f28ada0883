/* weights.h: the trained values of tiny.bnn for t/standalone_example.sh,
 * chosen by hand: class 0 is an image brighter in its top half (weights
 * +0.5 on rows 0-1, -0.5 on rows 2-3), class 1 one brighter in its bottom
 * half, class 2 has no weights; σ 0.25 on the weights, 0.125 on the biases.
 * The test puts the fingerprint lines of an `export` of the model before
 * these sections and `#endif` after them.  One row per class: its 16
 * weights (the image's rows 0 to 3, 4 pixels each), then the 3 biases. */
/* clang-format off */
/* checkpoint section 'params' */
#define TINY_W_PARAMS_COUNT 51L
static const float tiny_w_params[51] = {
	0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f,
	-0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f, -0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
	0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
	0.0f, 0.0f, 0.0f
};
/* checkpoint section 'sigma' */
#define TINY_W_SIGMA_COUNT 51L
static const float tiny_w_sigma[51] = {
	0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f,
	0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f,
	0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f,
	0.125f, 0.125f, 0.125f
};
/* clang-format on */
