// SPDX-License-Identifier: MIT
// Names for a list of state fields that tell repeated ones apart: a name saved in several files
// (epoch in manifest.json and optimizer.pt, sampler.position in every rng-rank-N.pt) carries its
// file, "epoch (manifest.json)", so no value hides behind another file's or rank's.
#pragma once

#include "ckpt/state/training_state.h"

#include <string>
#include <vector>

/// One label per field, in the fields' order: the name, with the file name when the name repeats.
std::vector<std::string> fieldLabels(const std::vector<ckpt::StateField>& fields);
