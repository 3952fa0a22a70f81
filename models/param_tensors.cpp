#include "models/param_tensors.hpp"

namespace trainsim::models {

std::vector<ParamTensor> param_tensors(const Layer& l) {
  std::vector<ParamTensor> out;
  std::int64_t listed = 0;
  for (const LinearWeight& w : l.linears) {
    if (w.count == 0) continue;
    out.push_back({w.out, w.in, 1, w.count});
    listed += out.back().elements();
  }
  for (const ParamTensor& t : l.tensors) {
    out.push_back(t);
    listed += t.elements();
  }
  if (l.params > listed) out.push_back({l.params - listed});
  return out;
}

StoredDims stored_dims(const LinearWeight& w, std::int64_t tensor) {
  const std::int64_t div = w.split ? tensor : 1;
  return w.row_parallel ? StoredDims{w.in / div, w.out} : StoredDims{w.in, w.out / div};
}

}  // namespace trainsim::models
