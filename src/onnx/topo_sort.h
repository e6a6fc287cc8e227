// Orders nodes so each runs after the producers of its inputs; rejects cycles and undefined inputs.
#pragma once
#include <vector>

#include "onnx/graph.h"

namespace ogx {
std::vector<Node> topo_sort(const Graph& g, std::vector<Node> nodes);
}
