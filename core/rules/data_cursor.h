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

/// When the cursor is a sampler position counted in samples (the recovery guide's §4.2 example):
/// the whole k >= 2 such that the position is k times the batches the global step has trained into
/// the cursor's epoch; 0 at an epoch boundary (position 0, any unit fits); nullopt when the position
/// is not a sampler's, the figures are missing, or no whole unit fits.
std::optional<int64_t> samplesPerBatch(const TrainingState& state, const DataCursor& cursor);

} // namespace ckpt::rules
