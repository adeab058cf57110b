// The shared start of the corpus builders: the model zoo's MLP (4 features, two hidden layers of
// 8, 3 classes, relu, softmax cross entropy), its backward pass, and the bundle.json fields every
// case shares — so the cases differ only in what their parallelisation adds.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "diff_tests/corpus/corpus.h"
#include "oldir/backward.h"
#include "oldir/models/model.h"

namespace irm::corpus {

// The MLP's forward pass and initialisers in `model` (seed from the options).
Status BuildCorpusMlp(const CorpusOptions& options, oldir::models::ModelPrograms* model);

// The persistable FETCH_LIST var and one fetch op per name of `model->fetches` (col in order),
// as the executor appends them.
void AppendFetchOps(oldir::models::ModelPrograms* model);

// bundle.json for `world_size` ranks: ring 0 of every rank, the model's feeds with dim 0 = `rows`
// (split along the batch), the loss fetched, steps and seed from the options.
oldir::Bundle BaseBundle(const oldir::models::ModelPrograms& model, int world_size, int64_t rows,
                         const CorpusOptions& options);

// A rank without a plan: the model's startup program and its main program as job "main".
RankPrograms MainOnlyRank(const oldir::models::ModelPrograms& model);

// Appends `c_allreduce_sum(X=g) -> g` on ring 0 and `scale(g, 1/ranks) -> g` per gradient (op role
// Backward): data parallelism's gradient synchronisation.
void AppendGradientSync(oldir::ProgramBuilder& main, const std::vector<oldir::ParamGrad>& grads,
                        int ranks);

}  // namespace irm::corpus
