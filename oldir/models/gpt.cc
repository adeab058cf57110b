// The GPT builder: the layers in construction order, then the forward pass block by block.
#include "oldir/models/gpt.h"

#include <fmt/format.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "oldir/layers.h"

namespace irm::oldir::models {
namespace {

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, Location{}, "GptConfig: " + std::move(message));
}

struct Block {
  layers::LayerNormLayer ln1;
  layers::LinearLayer q, k, v, proj;
  layers::LayerNormLayer ln2;
  layers::LinearLayer fc1, fc2;
};

// reshape2 to [0, 0, heads, head_dim], then transpose2 to [batch, heads, seq, head_dim].
StatusOr<std::string> SplitHeads(BlockBuilder& block, const std::string& x, int32_t heads,
                                 int32_t head_dim) {
  IRM_ASSIGN_OR_RETURN(layers::ShapeOpOutputs r,
                       layers::Reshape(block, x, {0, 0, heads, head_dim}));
  IRM_ASSIGN_OR_RETURN(layers::ShapeOpOutputs t, layers::Transpose(block, r.out, {0, 2, 1, 3}));
  return t.out;
}

StatusOr<std::string> DecoderBlock(BlockBuilder& block, const Block& layer, const GptConfig& config,
                                   int32_t program_seed, const std::string& x,
                                   const std::string& mask) {
  const auto heads = static_cast<int32_t>(config.heads);
  const auto head_dim = static_cast<int32_t>(config.hidden / config.heads);

  IRM_ASSIGN_OR_RETURN(layers::LayerNormOutputs ln1, layers::LayerNorm(block, layer.ln1, x));
  IRM_ASSIGN_OR_RETURN(std::string q, layers::Linear(block, layer.q, ln1.y));
  IRM_ASSIGN_OR_RETURN(std::string k, layers::Linear(block, layer.k, ln1.y));
  IRM_ASSIGN_OR_RETURN(std::string v, layers::Linear(block, layer.v, ln1.y));
  IRM_ASSIGN_OR_RETURN(q, SplitHeads(block, q, heads, head_dim));
  IRM_ASSIGN_OR_RETURN(k, SplitHeads(block, k, heads, head_dim));
  IRM_ASSIGN_OR_RETURN(v, SplitHeads(block, v, heads, head_dim));

  IRM_ASSIGN_OR_RETURN(std::string scores, layers::MatMul(block, q, k, false, /*trans_y=*/true));
  // head_dim ** -0.5, a Python double stored in a float attribute.
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  IRM_ASSIGN_OR_RETURN(scores, layers::Scale(block, scores, scale));
  IRM_ASSIGN_OR_RETURN(scores, layers::Add(block, scores, mask));
  IRM_ASSIGN_OR_RETURN(std::string weights, layers::Softmax(block, scores));
  IRM_ASSIGN_OR_RETURN(layers::DropoutOutputs dropped,
                       layers::Dropout(block, weights, config.dropout, false, program_seed));
  IRM_ASSIGN_OR_RETURN(std::string context, layers::MatMul(block, dropped.out, v));
  IRM_ASSIGN_OR_RETURN(layers::ShapeOpOutputs merged,
                       layers::Transpose(block, context, {0, 2, 1, 3}));
  IRM_ASSIGN_OR_RETURN(
      merged, layers::Reshape(block, merged.out, {0, 0, static_cast<int32_t>(config.hidden)}));
  IRM_ASSIGN_OR_RETURN(std::string attn, layers::Linear(block, layer.proj, merged.out));
  IRM_ASSIGN_OR_RETURN(std::string h, layers::Add(block, x, attn));

  IRM_ASSIGN_OR_RETURN(layers::LayerNormOutputs ln2, layers::LayerNorm(block, layer.ln2, h));
  IRM_ASSIGN_OR_RETURN(std::string ff, layers::Linear(block, layer.fc1, ln2.y));
  IRM_ASSIGN_OR_RETURN(ff, layers::Gelu(block, ff));
  IRM_ASSIGN_OR_RETURN(ff, layers::Linear(block, layer.fc2, ff));
  return layers::Add(block, h, ff);
}

}  // namespace

Status BuildGpt(const GptConfig& config, ModelPrograms* programs) {
  if (config.layers < 1 || config.hidden < 1 || config.heads < 1 || config.vocab < 1 ||
      config.seq < 1) {
    return Invalid(
        fmt::format("layers {}, hidden {}, heads {}, vocab {} and seq {} must be positive",
                    config.layers, config.hidden, config.heads, config.vocab, config.seq));
  }
  if (config.hidden % config.heads != 0) {
    return Invalid(fmt::format("heads {} do not divide hidden {}", config.heads, config.hidden));
  }
  if (!(config.dropout >= 0.0f && config.dropout < 1.0f)) {
    return Invalid(fmt::format("dropout {} is not in [0, 1)", config.dropout));
  }
  programs->seed = config.seed;
  BlockBuilder& block = programs->main.root();
  const int64_t seq = config.seq;

  IRM_ASSIGN_OR_RETURN(std::string tokens,
                       layers::Data(programs, {"tokens", proto::VarType::INT64, {-1, seq}}));
  IRM_ASSIGN_OR_RETURN(std::string labels,
                       layers::Data(programs, {"labels", proto::VarType::INT64, {-1, seq, 1}}));

  // GPT.__init__.
  IRM_ASSIGN_OR_RETURN(layers::EmbeddingLayer word,
                       layers::CreateEmbedding(programs, config.vocab, config.hidden));
  IRM_ASSIGN_OR_RETURN(layers::EmbeddingLayer pos,
                       layers::CreateEmbedding(programs, seq, config.hidden));
  std::vector<Block> blocks(static_cast<size_t>(config.layers));
  for (Block& b : blocks) {
    const int64_t hidden = config.hidden;
    IRM_ASSIGN_OR_RETURN(b.ln1, layers::CreateLayerNorm(programs, hidden));
    IRM_ASSIGN_OR_RETURN(b.q, layers::CreateLinear(programs, hidden, hidden));
    IRM_ASSIGN_OR_RETURN(b.k, layers::CreateLinear(programs, hidden, hidden));
    IRM_ASSIGN_OR_RETURN(b.v, layers::CreateLinear(programs, hidden, hidden));
    IRM_ASSIGN_OR_RETURN(b.proj, layers::CreateLinear(programs, hidden, hidden));
    IRM_ASSIGN_OR_RETURN(b.ln2, layers::CreateLayerNorm(programs, hidden));
    IRM_ASSIGN_OR_RETURN(b.fc1, layers::CreateLinear(programs, hidden, 4 * hidden));
    IRM_ASSIGN_OR_RETURN(b.fc2, layers::CreateLinear(programs, 4 * hidden, hidden));
  }
  IRM_ASSIGN_OR_RETURN(layers::LayerNormLayer final_ln,
                       layers::CreateLayerNorm(programs, config.hidden));
  IRM_ASSIGN_OR_RETURN(layers::LinearLayer head,
                       layers::CreateLinear(programs, config.hidden, config.vocab,
                                            /*with_bias=*/false));

  // GPT.forward: embeddings.
  IRM_ASSIGN_OR_RETURN(std::string x, layers::Embedding(block, word, tokens));
  std::vector<int64_t> positions(static_cast<size_t>(seq));
  std::iota(positions.begin(), positions.end(), int64_t{0});
  IRM_ASSIGN_OR_RETURN(std::string position_ids,
                       layers::AssignValue(block, {1, static_cast<int32_t>(seq)}, positions));
  IRM_ASSIGN_OR_RETURN(std::string position_embeddings,
                       layers::Embedding(block, pos, position_ids));
  IRM_ASSIGN_OR_RETURN(x, layers::Add(block, x, position_embeddings));

  // The causal mask: -1e4 above the diagonal, 0 on and below it, added to the attention scores.
  IRM_ASSIGN_OR_RETURN(std::string ones,
                       layers::FillConstant(block, proto::VarType::FP32, {seq, seq}, 1.0));
  IRM_ASSIGN_OR_RETURN(std::string negative, layers::Scale(block, ones, -1e4f));
  IRM_ASSIGN_OR_RETURN(std::string mask, layers::Triu(block, negative, 1));

  for (const Block& b : blocks) {
    IRM_ASSIGN_OR_RETURN(x, DecoderBlock(block, b, config, programs->seed, x, mask));
  }
  IRM_ASSIGN_OR_RETURN(layers::LayerNormOutputs normed, layers::LayerNorm(block, final_ln, x));
  IRM_ASSIGN_OR_RETURN(std::string logits, layers::Linear(block, head, normed.y));
  IRM_ASSIGN_OR_RETURN(layers::SoftmaxWithCrossEntropyOutputs ce,
                       layers::SoftmaxWithCrossEntropy(block, logits, labels));
  IRM_ASSIGN_OR_RETURN(programs->loss, layers::Mean(block, ce.loss));
  return layers::PrependFeedOps(programs);
}

}  // namespace irm::oldir::models
