// Loading the model before the step (docs/finetuning.md, "Quantizing at load" and "A cloned
// first block"): what building the model on the GPU allocates and frees, played by the allocator
// model after the model states (Program::load). The caching allocator keeps the segments these
// tensors took, so a step that needs less than the load did starts with them reserved.
//   - training.lora.quantize_on_load: whole: each NF4 base weight quantized on the GPU;
//   - training.model_init: cloned-layer: the first block built, deep-copied, then dropped.
// And, for training.optimizer_states: lazy, the optimizer states as torch.optim creates them in
// the first step (Program::lazy_states; docs/finetuning.md, "Optimizer states created in the
// first step").
#include <algorithm>

#include "sim/parallel/pass.hpp"
#include "sim/scenario/finetune.hpp"

namespace trainsim::parallel {

namespace {

using core::Bytes;
using hw::MemCategory;

constexpr std::string_view kKeys[] = {"training.lora", "training.model_init", "training.precision",
                                       "training.optimizer", "training.optimizer_states"};

// The cloned block's tensors are named from this layer offset on, clear of the quantizing
// load's (one name per intermediate and per kept weight: a few hundred).
constexpr std::int32_t kClonedKeys = 1 << 20;
// The lazily created optimizer states' from this one (two per parameter tensor).
constexpr std::int32_t kLazyStateKeys = 1 << 21;

class LoadPass final : public LoweringPass {
 public:
  void place_states(StageContext& c) override {
    const LowerContext& L = c.L;
    if (L.s.training.model_init == scenario::TrainingSpec::ModelInit::cloned_layer) cloned_block(c);
    if (L.s.training.lazy_optimizer_states) lazy_states(c);
    const auto& lora = L.s.training.lora;
    if (!lora || lora->quantize_on_load != scenario::QuantizeOnLoad::whole) return;
    // Every base weight in layer order, twice: torchtune builds each LoRALinear's weight in
    // bf16 on the GPU and quantizes it, its packed NF4 tensor staying (the model's) among the
    // segments the intermediates left; then load_state_dict quantizes the checkpoint's weight
    // again on the GPU and copies it into that tensor.
    std::vector<std::pair<std::int64_t, Bytes>> weights;  // elements, packed bytes
    for (std::int32_t g = c.P.stage; g < L.chunk_count(); g += L.stages)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) {
        if (L.shards[i].dequantized.value == 0) continue;
        const models::Layer& l = L.m.graph[L.m.order[i]];
        for (const models::LinearWeight& w : l.linears) {
          if (w.count == 0) continue;
          const std::int64_t div = w.split ? L.tensor : 1;
          const std::int64_t in = w.row_parallel ? w.in / div : w.in;
          const std::int64_t out = w.row_parallel ? w.out : w.out / div;
          const Bytes packed = scenario::base_weight_bytes(lora->base, in, out, 2);
          for (std::int64_t k = 0; k < w.count; ++k) weights.emplace_back(in * out, packed);
        }
      }
    std::int32_t kept = 0;
    for (const auto& [n, packed] : weights) append_to_nf4(c.P, n, packed, kept++);
    for (const auto& [n, packed] : weights) append_to_nf4(c.P, n, packed, -1);
  }

 private:
  // torch.optim's `_init_group` (adam.py, adamw.py) on the first step(): for each parameter in
  // model.parameters() order, `exp_avg = zeros_like(p)` then `exp_avg_sq = zeros_like(p)` (one
  // buffer for momentum and Lion); `step` is a CPU scalar unless capturable or fused, left out.
  // Here in trainsim's layer order, which is torch's but for a block's norms: their layers come
  // before the linears they feed, where torch registers them after (small-pool tensors of a few
  // KiB either way). Each parameter tensor of the device's layers takes the share of the
  // optimizer states its elements are of the device's (under FSDP2 each parameter is its own
  // sharded DTensor, so each state is that shard's size); the shares sum to the states booked.
  static void lazy_states(StageContext& c) {
    const LowerContext& L = c.L;
    const core::Bytes total = c.P.persistent[MemCategory::optimizer_states];
    const int buffers = L.s.training.optimizer == scenario::Optimizer::momentum ||
                                L.s.training.optimizer == scenario::Optimizer::lion
                            ? 1
                            : 2;
    if (total.value <= 0) return;
    std::vector<Bytes> elements;  // per parameter tensor (block_tensors at one byte each)
    for (std::int32_t g = c.P.stage; g < L.chunk_count(); g += L.stages)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i)
        if (L.shards[i].trainable > 0) block_tensors(L.m.graph[L.m.order[i]], std::nullopt, 1, L.tensor, elements);
    std::int64_t sum = 0;
    for (const Bytes e : elements) sum += e.value;
    if (sum <= 0) return;
    std::int64_t before = 0, cumulative = 0;
    std::int32_t k = 0;
    for (const Bytes e : elements) {
      cumulative += e.value;
      // floor(total x cumulative / sum), in 128 bits: the shares add up to the total exactly.
      __extension__ typedef __int128 Wide;
      const auto upto = static_cast<std::int64_t>(static_cast<Wide>(total.value) * cumulative / sum);
      const std::int64_t share = upto - before;
      before = upto;
      for (int b = 0; b < buffers; ++b) {
        const std::int64_t bytes = share / buffers + (b < share % buffers ? 1 : 0);
        if (bytes > 0)
          c.P.lazy_states.push_back({MemCategory::optimizer_states, Bytes{bytes}, TensorKind::optimizer_state,
                                     c.P.first_layer + kLazyStateKeys + k++, false});
      }
    }
  }

  // torchtune's TransformerDecoder (`_get_clones`, until mid-2024) builds one block on the GPU,
  // deep-copies it once per block and drops it when the builder returns: the first block's
  // parameter tensors are allocated and freed beside the model's (validated: not quantized, not
  // sharded by FSDP or ZeRO-3), each at the bytes the device holds it in.
  static void cloned_block(StageContext& c) {
    const LowerContext& L = c.L;
    const auto& lora = L.s.training.lora;
    const int wb = L.state_bytes.weights;
    std::vector<Bytes> tensors;
    int block = -1;
    for (std::int32_t g = c.P.stage; g < L.chunk_count() && block < 0; g += L.stages)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) {
        const models::Layer& l = L.m.graph[L.m.order[i]];
        if (l.block < 0 || (block >= 0 && l.block != block)) continue;
        block = l.block;
        block_tensors(l, lora, wb, L.tensor, tensors);
      }
    std::int32_t k = 0;
    for (const Bytes b : tensors) add_cloned(c.P, b, k++, true);
    k = 0;
    for (const Bytes b : tensors) add_cloned(c.P, b, k++, false);
  }
  // One block layer's parameter tensors: each linear weight (as stored), its LoRA adapters A
  // (rank x in) and B (out x rank) where targeted, and its other tensors (norm weights, biases).
  static void block_tensors(const models::Layer& l, const std::optional<scenario::LoraSpec>& lora,
                            int wb, std::int64_t tensor, std::vector<Bytes>& out) {
    std::int64_t linear_params = 0;
    for (std::size_t r = 0; r < models::kLinearRoles; ++r) {
      const models::LinearWeight& w = l.linears[r];
      if (w.count == 0) continue;
      linear_params += w.in * w.out * w.count;
      const std::int64_t div = w.split ? tensor : 1;
      const std::int64_t in = w.row_parallel ? w.in / div : w.in;
      const std::int64_t o = w.row_parallel ? w.out : w.out / div;
      const auto base = lora ? lora->base : scenario::BaseWeights::precision;
      const bool adapted = lora && lora->targets_role(static_cast<models::LinearRole>(r));
      for (std::int64_t k = 0; k < w.count; ++k) {
        out.push_back(scenario::base_weight_bytes(base, in, o, wb));
        if (adapted) out.insert(out.end(), {Bytes{lora->rank * in * wb}, Bytes{o * lora->rank * wb}});
      }
    }
    for (const models::ParamTensor& t : l.tensors)
      for (std::int64_t k = 0; k < t.count; ++k) out.push_back(Bytes{t.elements() / t.count * wb});
    // A generic layer lists no tensors: its other parameters as one vector.
    if (l.tensors.empty() && l.params > linear_params) out.push_back(Bytes{(l.params - linear_params) * wb});
  }
  static void add_cloned(Program& P, Bytes bytes, std::int32_t k, bool alloc) {
    P.load.push_back({{MemCategory::weights, bytes, TensorKind::load_temp, P.first_layer + kClonedKeys + k, false}, alloc});
  }

  // torchao 0.1's to_nf4 (NF4Tensor.from_tensor) of a bf16 weight of n elements, line by line
  // (the per-block scalers, n/64 elements, left out). Live at the peak: the weight, its scaled
  // blocks and the two n x 16 bf16 tensors of quantize_tensor_nearest, 68 n bytes. `kept` >= 0:
  // the packed weight (`packed` bytes, the model's) stays, the kept-th of the load; else it is
  // copied into the kept one and freed.
  static void append_to_nf4(Program& P, std::int64_t n, Bytes packed_bytes, std::int32_t kept) {
    enum Tensor : std::int32_t { src, abs1, abs2, scaled, diff, absd, minv, mini, shift, comb, packed, count };
    const auto add = [&](Tensor t, std::int64_t bytes, bool alloc) {
      P.load.push_back({{MemCategory::buffers, Bytes{bytes}, TensorKind::load_temp, P.first_layer + t, false}, alloc});
    };
    const auto alloc = [&](Tensor t, std::int64_t bytes) { add(t, bytes, true); };
    const auto free = [&](Tensor t, std::int64_t bytes) { add(t, bytes, false); };
    alloc(src, 2 * n);                        // the bf16 weight on the GPU
    alloc(abs1, 2 * n), free(abs1, 2 * n);    // double_quantize_scalers: get_block_absmax's abs()
    alloc(abs2, 2 * n), free(abs2, 2 * n);    // convert_to_norm_float_weight: the same again
    alloc(scaled, 2 * n);                     // blocks / scales
    alloc(diff, 32 * n);                      // quantize_tensor_nearest: value - nf4, n x 16 bf16
    alloc(absd, 32 * n), free(diff, 32 * n);  // .abs()
    alloc(minv, 2 * n), alloc(mini, 8 * n);   // .min(dim=-1): bf16 values, int64 indices
    free(absd, 32 * n), free(minv, 2 * n);
    alloc(shift, 4 * n);                      // indices[::2] << 4 (int64, n/2)
    alloc(comb, 4 * n), free(shift, 4 * n);   // | indices[1::2]
    if (kept >= 0) {
      // The model's packed weight and scalers: category weights, kept past the load.
      P.load.push_back({{MemCategory::weights, packed_bytes, TensorKind::load_temp,
                         P.first_layer + count + kept, false}, true});
      free(comb, 4 * n), free(mini, 8 * n), free(scaled, 2 * n), free(src, 2 * n);
      return;
    }
    alloc(packed, n / 2);                     // .to(torch.uint8)
    free(comb, 4 * n), free(mini, 8 * n), free(scaled, 2 * n);
    // Copied into the model's packed weight; the new one and the checkpoint's copy go.
    free(packed, n / 2), free(src, 2 * n);
  }
};

}  // namespace

PassEntry load_pass() { return {"load", kKeys, {}, make_pass<LoadPass>, nullptr}; }

}  // namespace trainsim::parallel
