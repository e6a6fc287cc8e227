#include "onnx/topo_sort.h"

#include <functional>
#include <queue>

namespace ogx {

std::vector<Node> topo_sort(const Graph& g, std::vector<Node> nodes) {
  std::vector<int> producer(g.values.size(), -1);
  for (size_t i = 0; i < nodes.size(); i++)
    for (int v : nodes[i].outputs) {
      if (v < 0) continue;
      OGX_CHECK(producer[v] < 0 && !g.values[v].is_constant, "value '", g.values[v].name,
                "' is produced twice (by ", nodes[i].describe(), ")");
      producer[v] = (int)i;
    }
  std::vector<bool> is_input(g.values.size(), false);
  for (int id : g.input_ids) is_input[id] = true;
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<int>> users(nodes.size());
  for (size_t i = 0; i < nodes.size(); i++) {
    for (int v : nodes[i].inputs) {
      if (v < 0 || g.values[v].is_constant || is_input[v]) continue;
      OGX_CHECK(producer[v] >= 0, nodes[i].describe(), ": input '", g.values[v].name,
                "' is not a graph input, initializer or node output");
      pending[i]++;
      users[producer[v]].push_back((int)i);
    }
  }
  // Min-heap on file position keeps the file order wherever it is already valid.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < nodes.size(); i++)
    if (pending[i] == 0) ready.push((int)i);
  std::vector<Node> out;
  out.reserve(nodes.size());
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  OGX_CHECK(order.size() == nodes.size(), "the graph has a cycle (", nodes.size() - order.size(),
            " nodes never become ready)");
  for (int i : order) out.push_back(std::move(nodes[i]));
  return out;
}

}  // namespace ogx
