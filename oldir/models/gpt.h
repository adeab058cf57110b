// The model zoo's GPT: a small pre-LayerNorm decoder, written as the Paddle 2.6 static-graph script
//
//   tokens = paddle.static.data('tokens', [None, seq], 'int64')
//   labels = paddle.static.data('labels', [None, seq, 1], 'int64')
//   # GPT.__init__ constructs, in this order:
//   word = nn.Embedding(vocab, hidden); pos = nn.Embedding(seq, hidden)
//   per block: ln1 = nn.LayerNorm(hidden); q, k, v, proj = nn.Linear(hidden, hidden) x4;
//              ln2 = nn.LayerNorm(hidden); fc1 = nn.Linear(hidden, 4 * hidden);
//              fc2 = nn.Linear(4 * hidden, hidden)
//   final_ln = nn.LayerNorm(hidden); head = nn.Linear(hidden, vocab, bias_attr=False)
//   # GPT.forward:
//   x = word(tokens) + pos(paddle.assign(np.arange(seq).reshape([1, seq])))   # assign_value
//   mask = paddle.triu(paddle.scale(paddle.ones([seq, seq]), -1e4), 1)        # causal, additive
//   per block:
//     h = ln1(x)
//     q, k, v = q(h), k(h), v(h)
//     q, k, v = [paddle.transpose(paddle.reshape(t, [0, 0, heads, head_dim]), [0, 2, 1, 3])
//                for t in (q, k, v)]
//     w = paddle.scale(paddle.matmul(q, k, transpose_y=True), head_dim ** -0.5) + mask
//     w = F.dropout(F.softmax(w), dropout)                                     # upscale_in_train
//     o = paddle.reshape(paddle.transpose(paddle.matmul(w, v), [0, 2, 1, 3]), [0, 0, hidden])
//     x = x + proj(o)
//     x = x + fc2(F.gelu(fc1(ln2(x))))
//   logits = head(final_ln(x))
//   loss = paddle.mean(F.softmax_with_cross_entropy(logits, labels))          # the `mean` op
//
// with main.random_seed = startup.random_seed = seed and the executor's feed ops for tokens (col 0)
// and labels (col 1). Dropout 0 appends no dropout op (F.dropout returns its input).
// Parameter names follow construction order: embedding_0.w_0 (word), embedding_1.w_0 (position),
// then per block i layer_norm_{2i}, linear_{6i}..linear_{6i+5} (q, k, v, proj, fc1, fc2),
// layer_norm_{2i+1}; then layer_norm_{2L} (final) and linear_{6L}.w_0 (head).
#pragma once

#include <cstdint>

#include "common/status.h"
#include "oldir/models/model.h"

namespace irm::oldir::models {

struct GptConfig {
  int layers = 1;
  int64_t hidden = 64;
  int64_t heads = 4;  // must divide hidden
  int64_t vocab = 128;
  int64_t seq = 16;      // sequence length, also the number of positions
  float dropout = 0.1f;  // attention dropout probability, in [0, 1)
  int32_t seed = 0;      // the programs' random_seed
};

// Writes the GPT into empty `programs` and sets programs->seed, ->loss and ->feeds.
// kInvalidArgument for a config with a non-positive size, heads not dividing hidden, or a dropout
// outside [0, 1).
Status BuildGpt(const GptConfig& config, ModelPrograms* programs);

}  // namespace irm::oldir::models
