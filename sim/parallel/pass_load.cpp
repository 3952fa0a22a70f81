// Loading the model before the step (docs/finetuning.md, "Quantizing at load" and "A cloned
// first block"): what building the model on the GPU allocates and frees, played by the allocator
// model after the model states (Program::load). The caching allocator keeps the segments these
// tensors took, so a step that needs less than the load did starts with them reserved.
//   - training.lora.quantize_on_load: whole: each NF4 base weight quantized on the GPU;
//   - training.model_init: cloned-layer: the first block built, deep-copied, then dropped;
//   - both: the first block's weights quantized, each copy's dequantized and quantized again.
// And, for training.optimizer_states: lazy, the optimizer states as torch.optim creates them in
// the first step (Program::lazy_states; docs/finetuning.md, "Optimizer states created in the
// first step").
#include <algorithm>
#include <utility>

#include "models/param_tensors.hpp"
#include "sim/parallel/pass.hpp"
#include "sim/scenario/finetune.hpp"

namespace trainsim::parallel {

namespace {

using core::Bytes;
using hw::MemCategory;

constexpr std::string_view kKeys[] = {"training.lora", "training.model_init", "training.precision",
                                       "training.optimizer", "training.optimizer_states"};

// Names of the load's tensors, as layer offsets from the stage's first layer (one name per
// tensor alive at a time): the intermediates of one to_nf4 or dequantization, then the model's
// packed weights as built and as load_state_dict replaces them, the tensors outside the blocks
// (embedding, final norm, head) and the cloned first block's tensors.
constexpr std::int32_t kBuiltKeys = 1 << 16;
constexpr std::int32_t kAdoptedKeys = 1 << 17;
constexpr std::int32_t kOuterKeys = 1 << 18;
constexpr std::int32_t kClonedKeys = 1 << 20;
// The lazily created optimizer states' from this one (two per parameter tensor).
constexpr std::int32_t kLazyStateKeys = 1 << 21;

// One quantized base weight of the stage: its elements, packed bytes (scenario::base_weight_bytes),
// its block, and its LoRA adapters' bytes (A and B; 0 where the linear is not targeted).
struct Nf4Weight {
  std::int64_t n = 0;
  Bytes packed{};
  int block = -1;
  Bytes adapter_a{}, adapter_b{};
};

class LoadPass final : public LoweringPass {
 public:
  void place_states(StageContext& c) override {
    const LowerContext& L = c.L;
    if (L.s.training.lazy_optimizer_states) lazy_states(c);
    const bool cloned = L.s.training.model_init == scenario::TrainingSpec::ModelInit::cloned_layer;
    const auto& lora = L.s.training.lora;
    const bool quantizing = lora && lora->quantize_on_load == scenario::QuantizeOnLoad::whole;
    if (!quantizing) {
      if (cloned) cloned_block(c);
      return;
    }
    // Every base weight in layer order, twice: torchtune builds each LoRALinear's weight in
    // bf16 on the GPU and quantizes it, its packed NF4 tensor staying (the model's) among the
    // segments the intermediates left (with a cloned block: the first block's, then each copy
    // dequantizes and quantizes it again); then load_state_dict quantizes the checkpoint's
    // weight on the GPU and the model's NF4 tensor takes the new packed tensors, its old ones
    // freed (torchtune's _register_nf4_dispatch_ops.inplace_copy).
    const std::vector<Nf4Weight> weights = quantized_weights(L, c.P.stage);
    if (cloned) {
      build_cloned(c, weights);
    } else {
      for (std::size_t i = 0; i < weights.size(); ++i) {
        alloc_bf16(c.P, weights[i].n);
        to_nf4(c.P, weights[i].n, built(c.P, weights[i], i));
        free_bf16(c.P, weights[i].n);
      }
    }
    for (std::size_t i = 0; i < weights.size(); ++i) {
      alloc_bf16(c.P, weights[i].n);  // the checkpoint's weight, copied to the GPU
      to_nf4(c.P, weights[i].n, {MemCategory::weights, weights[i].packed, TensorKind::load_temp,
                                 c.P.first_layer + kAdoptedKeys + static_cast<std::int32_t>(i), false});
      free_bf16(c.P, weights[i].n);
      c.P.load.push_back({built(c.P, weights[i], i), false});
    }
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

  static MemEffect built(const Program& P, const Nf4Weight& w, std::size_t i) {
    return {MemCategory::weights, w.packed, TensorKind::load_temp,
            P.first_layer + kBuiltKeys + static_cast<std::int32_t>(i), false};
  }

  static std::vector<Nf4Weight> quantized_weights(const LowerContext& L, std::int32_t stage) {
    const auto& lora = *L.s.training.lora;
    const int wb = L.state_bytes.weights;
    std::vector<Nf4Weight> out;
    for (std::int32_t g = stage; g < L.chunk_count(); g += L.stages)
      for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) {
        if (L.shards[i].dequantized.value == 0) continue;
        const models::Layer& l = L.m.graph[L.m.order[i]];
        for (std::size_t r = 0; r < models::kLinearRoles; ++r) {
          const models::LinearWeight& w = l.linears[r];
          if (w.count == 0) continue;
          const auto [in, o] = models::stored_dims(w, L.tensor);
          const bool adapted = lora.targets_role(static_cast<models::LinearRole>(r));
          const Nf4Weight q{in * o, scenario::base_weight_bytes(lora.base, in, o, 2), l.block,
                            Bytes{adapted ? lora.rank * in * wb : 0}, Bytes{adapted ? o * lora.rank * wb : 0}};
          for (std::int64_t k = 0; k < w.count; ++k) out.push_back(q);
        }
      }
    return out;
  }

  // torchtune's Llama-2 builders at 0914d5c with a quantized base: the first block's LoRALinears
  // each build a bf16 weight and quantize it (`_create_weight_and_bias`), then their adapters;
  // the block's norms; then the embedding, the head and the final norm (the builder's other
  // arguments); then `_get_clones` deep-copies the block once per block: Tensor.__deepcopy__ of
  // an NF4Tensor (a wrapper without storage) calls clone(), which torchtune dispatches to
  // `to_nf4(get_original_weight())`, and then deep-copies the tensor's __dict__ (its packed
  // data) into the clone, whose own packed data goes. The first block goes when the builder
  // returns. The copies' adapters and norms (under 1 MiB each: the small pool's) stay in the
  // model states' flat buffer.
  static void build_cloned(StageContext& c, const std::vector<Nf4Weight>& weights) {
    const LowerContext& L = c.L;
    Program& P = c.P;
    std::int32_t k = kClonedKeys;
    if (weights.empty()) return;
    const auto first_block = [&](Bytes b) {
      P.load.push_back({{MemCategory::weights, b, TensorKind::load_temp, P.first_layer + k++, false}, true});
    };
    const int first = weights.front().block;
    for (const Nf4Weight& w : weights) {
      if (w.block != first) continue;
      alloc_bf16(P, w.n);
      to_nf4(P, w.n, {MemCategory::weights, w.packed, TensorKind::load_temp, P.first_layer + k++, false});
      free_bf16(P, w.n);
      if (w.adapter_a.value > 0) first_block(w.adapter_a), first_block(w.adapter_b);
    }
    const int wb = L.state_bytes.weights;
    std::int32_t outer = kOuterKeys;
    // The first block's norms, then the tensors outside the blocks (kept: the model's, outside
    // the flat buffer).
    for (const bool in_first : {true, false})
      for (std::int32_t g = P.stage; g < L.chunk_count(); g += L.stages)
        for (std::int32_t i = L.chunks[g].first; i < L.chunks[g].end; ++i) {
          const models::Layer& l = L.m.graph[L.m.order[i]];
          if (in_first ? l.block != first : l.block >= 0) continue;
          for (const models::ParamTensor& t : l.tensors)
            for (std::int64_t n = 0; n < t.count; ++n) {
              const Bytes b{t.elements() / t.count * wb};
              if (in_first) first_block(b);
              else P.load.push_back({{MemCategory::weights, b, TensorKind::load_temp, P.first_layer + outer++, false}, true});
            }
        }
    const std::int32_t first_end = k;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      const std::int64_t n = weights[i].n;
      const MemEffect cloned{MemCategory::buffers, weights[i].packed, TensorKind::load_temp, P.first_layer + packed, false};
      dequantize(P, n);
      to_nf4(P, n, cloned);
      free_bf16(P, n);  // the dequantized weight
      P.load.push_back({built(P, weights[i], i), true});
      P.load.push_back({cloned, false});
    }
    // The first block, freed in the order it was built (its effects name the same tensors).
    const std::size_t built_end = P.load.size();
    for (std::size_t e = 0; e < built_end; ++e) {
      const auto& l = P.load[e];
      const std::int32_t off = l.effect.layer - P.first_layer;
      if (l.alloc && off >= kClonedKeys && off < first_end) P.load.push_back({l.effect, false});
    }
  }

  // Intermediates of one to_nf4 or get_original_weight, named by their offset.
  enum Temp : std::int32_t {
    src, abs1, abs2, scaled, diff, absd, minv, mini, shift, comb, packed,
    hi, first_idx, lo, second_idx, dq1, dq2, rep, sf1, sf2
  };
  static void temp(Program& P, Temp t, std::int64_t bytes, bool alloc) {
    P.load.push_back({{MemCategory::buffers, Bytes{bytes}, TensorKind::load_temp, P.first_layer + t, false}, alloc});
  }
  static void alloc_bf16(Program& P, std::int64_t n) { temp(P, src, 2 * n, true); }
  static void free_bf16(Program& P, std::int64_t n) { temp(P, src, 2 * n, false); }

  // torchao 0.1's to_nf4 (NF4Tensor.from_tensor) of the bf16 weight `src` of n elements on the
  // GPU, line by line up to its return (the per-block scalers, n/64 elements, left out). Live
  // at the peak: the weight, its scaled blocks and the two n x 16 bf16 tensors of
  // quantize_tensor_nearest, 68 n bytes. `out`: the NF4 tensor's packed data (and scalers).
  static void to_nf4(Program& P, std::int64_t n, const MemEffect& out) {
    temp(P, abs1, 2 * n, true), temp(P, abs1, 2 * n, false);  // double_quantize_scalers: abs()
    temp(P, abs2, 2 * n, true), temp(P, abs2, 2 * n, false);  // convert_to_norm_float_weight: again
    temp(P, scaled, 2 * n, true);                              // blocks / scales
    temp(P, diff, 32 * n, true);                               // value - nf4, n x 16 bf16
    temp(P, absd, 32 * n, true), temp(P, diff, 32 * n, false); // .abs()
    temp(P, minv, 2 * n, true), temp(P, mini, 8 * n, true);    // .min(dim=-1): values, int64 indices
    temp(P, absd, 32 * n, false), temp(P, minv, 2 * n, false);
    temp(P, shift, 4 * n, true);                               // indices[::2] << 4 (int64, n/2)
    temp(P, comb, 4 * n, true), temp(P, shift, 4 * n, false);  // | indices[1::2]
    P.load.push_back({out, true});                             // .to(torch.uint8), the scalers
    temp(P, comb, 4 * n, false), temp(P, mini, 8 * n, false), temp(P, scaled, 2 * n, false);
  }

  // torchao 0.1's NF4Tensor.get_original_weight of n elements, line by line: the packed bytes
  // shifted and masked (uint8, n/2 each) and widened to int64 indices (4 n each), looked up in
  // the nf4 table (bf16, n/2 elements each), the block scalers repeated (n/2 bf16, a copy for
  // each half) and multiplied in, then stacked: the bf16 weight (`src`, 2 n) stays; the
  // function's locals go when it returns. At most 14 n bytes live.
  static void dequantize(Program& P, std::int64_t n) {
    temp(P, hi, n / 2, true), temp(P, first_idx, 4 * n, true), temp(P, hi, n / 2, false);
    temp(P, lo, n / 2, true), temp(P, second_idx, 4 * n, true), temp(P, lo, n / 2, false);
    temp(P, dq1, n, true), temp(P, dq2, n, true);
    temp(P, rep, n, true), temp(P, sf1, n, true), temp(P, rep, n, false);
    temp(P, rep, n, true), temp(P, sf2, n, true), temp(P, rep, n, false);
    alloc_bf16(P, n);  // torch.stack
    for (const Temp t : {first_idx, second_idx}) temp(P, t, 4 * n, false);
    for (const Temp t : {dq1, dq2, sf1, sf2}) temp(P, t, n, false);
  }

  // torchtune's TransformerDecoder (`_get_clones`, until mid-2024) builds one block on the GPU,
  // deep-copies it once per block and drops it when the builder returns: the first block's
  // parameter tensors are allocated and freed beside the model's (validated: not sharded by
  // FSDP or ZeRO-3; a quantized base is played by build_cloned), each at the bytes the device
  // holds it in.
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
      const auto [in, o] = models::stored_dims(w, tensor);
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
};

}  // namespace

PassEntry load_pass() { return {"load", kKeys, {}, make_pass<LoadPass>, nullptr}; }

}  // namespace trainsim::parallel
