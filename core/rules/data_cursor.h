// SPDX-License-Identifier: MIT
// The data cursor of one checkpoint, gathered from whichever fields record it: the epoch, the
// position in it (batch_pos, position, cursor, or the first rank's sampler position), and the
// number of batches per epoch when the checkpoint or its manifest says.
#pragma once

#include "ckpt/state/training_state.h"

#include <optional>
#include <string>

namespace ckpt::rules {

struct DataCursor {
    std::optional<double> epoch;
    Provenance epochFrom;
    std::optional<int64_t> position;
    std::string positionName;
    Provenance positionFrom;
    std::optional<int64_t> batchesPerEpoch;
    Provenance batchesFrom;
    std::optional<double> seed;
    Provenance seedFrom;

    /// Batches consumed since the start of training: epoch × batches per epoch + position.
    std::optional<int64_t> consumed() const;
};

DataCursor readDataCursor(const TrainingState& state);

} // namespace ckpt::rules
