/* bnn_gen.h: placeholder */
