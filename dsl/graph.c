/* graph.c: storage and small queries of the checked model graph (graph.h). */
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int graph_add_node(struct graph *g)
{
	if (g->nnodes == g->cap) {
		int cap = g->cap ? 2 * g->cap : 64;
		struct graph_node *grown = realloc(g->nodes, (size_t)cap * sizeof *grown);
		if (!grown)
			return -1;
		g->nodes = grown;
		g->cap = cap;
	}
	memset(&g->nodes[g->nnodes], 0, sizeof g->nodes[0]);
	return g->nnodes++;
}

void graph_free(struct graph *g)
{
	int i;
	for (i = 0; i < g->nnodes; i++)
		free(g->nodes[i].inputs);
	free(g->nodes);
	g->nodes = NULL;
	g->nnodes = g->cap = 0;
}

void graph_shape_str(const struct graph_node *n, char *buf, size_t size)
{
	if (n->rank == 3)
		snprintf(buf, size, "[%ld, %ld, %ld]", n->shape[0], n->shape[1], n->shape[2]);
	else if (n->rank == 2)
		snprintf(buf, size, "[%ld, %ld]", n->shape[0], n->shape[1]);
	else
		snprintf(buf, size, "[%ld]", n->shape[0]);
}

void graph_node_map(const struct graph_node *n, long map[3])
{
	map[0] = n->shape[0];
	map[1] = n->rank == 3 ? n->shape[1] : 1;
	map[2] = n->rank == 3 ? n->shape[2] : n->rank == 2 ? n->shape[1] : 1;
}

long long graph_node_elements(const struct graph_node *n)
{
	long long e = 1;
	int i;
	for (i = 0; i < n->rank; i++)
		e *= n->shape[i];
	return e;
}
