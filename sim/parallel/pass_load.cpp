// Loading the model before the step (training.lora.quantize_on_load; docs/finetuning.md,
// "Quantizing at load"): what quantizing each NF4 base weight on the GPU allocates and frees,
// played by the allocator model after the model states (Program::load). The caching allocator
// keeps the segments these intermediates took, so a step that needs less than the load did
// starts with them reserved.
#include <algorithm>

#include "sim/parallel/pass.hpp"

namespace trainsim::parallel {

namespace {

using core::Bytes;
using hw::MemCategory;

constexpr std::string_view kKeys[] = {"training.lora"};

class LoadPass final : public LoweringPass {
 public:
  void place_states(StageContext& c) override {
    const LowerContext& L = c.L;
    const auto& lora = L.s.training.lora;
    if (!lora || lora->quantize_on_load != scenario::QuantizeOnLoad::whole) return;
    const std::int64_t e = models::dtype_bytes(scenario::activation_dtype(L.s.training.precision));
    // One weight per distinct size, in layer order: a later weight of a size already quantized
    // meets the same cached segments in the same state and reserves nothing more.
    std::vector<std::int64_t> sizes;
    for (std::int32_t g = c.P.stage; g < L.chunk_count(); g += L.stages)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) {
        const std::int64_t n = L.shards[i].dequantized.value / e;
        if (n > 0 && std::find(sizes.begin(), sizes.end(), n) == sizes.end()) sizes.push_back(n);
      }
    for (const std::int64_t n : sizes) append_to_nf4(c.P, n);
  }

 private:
  // torchao 0.1's to_nf4 (NF4Tensor.from_tensor) of a bf16 weight of n elements, line by line
  // (the per-block scalers, n/64 elements, left out). Live at the peak: the weight, its scaled
  // blocks and the two n x 16 bf16 tensors of quantize_tensor_nearest, 68 n bytes.
  static void append_to_nf4(Program& P, std::int64_t n) {
    enum Tensor : std::int32_t { src, abs1, abs2, scaled, diff, absd, minv, mini, shift, comb, packed };
    const auto add = [&](Tensor t, std::int64_t bytes, bool alloc) {
      P.load.push_back({{MemCategory::buffers, Bytes{bytes}, TensorKind::load_temp, P.first_layer + t, false}, alloc});
    };
    const auto alloc = [&](Tensor t, std::int64_t bytes) { add(t, bytes, true); };
    const auto free = [&](Tensor t, std::int64_t bytes) { add(t, bytes, false); };
    alloc(src, 2 * n);                        // the checkpoint's bf16 weight copied to the GPU
    alloc(abs1, 2 * n), free(abs1, 2 * n);    // double_quantize_scalers: get_block_absmax's abs()
    alloc(abs2, 2 * n), free(abs2, 2 * n);    // convert_to_norm_float_weight: the same again
    alloc(scaled, 2 * n);                     // blocks / scales
    alloc(diff, 32 * n);                      // quantize_tensor_nearest: value - nf4, n x 16 bf16
    alloc(absd, 32 * n), free(diff, 32 * n);  // .abs()
    alloc(minv, 2 * n), alloc(mini, 8 * n);   // .min(dim=-1): bf16 values, int64 indices
    free(absd, 32 * n), free(minv, 2 * n);
    alloc(shift, 4 * n);                      // indices[::2] << 4 (int64, n/2)
    alloc(comb, 4 * n), free(shift, 4 * n);   // | indices[1::2]
    alloc(packed, n / 2);                     // .to(torch.uint8)
    free(comb, 4 * n), free(mini, 8 * n), free(scaled, 2 * n);
    // The packed weight is the one the model states hold; the checkpoint's copy goes.
    free(packed, n / 2), free(src, 2 * n);
  }
};

}  // namespace

PassEntry load_pass() { return {"load", kKeys, {}, make_pass<LoadPass>, nullptr}; }

}  // namespace trainsim::parallel
