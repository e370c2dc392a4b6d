// SPDX-License-Identifier: MIT
// JSON as Python's json module writes it. json.dumps defaults to allow_nan=True and writes the bare
// tokens NaN, Infinity and -Infinity, which RFC 8259 parsers reject. Trainers write them for real:
// transformers' TrainerState.save_to_json (transformers@55093b75:src/transformers/trainer_callback.py,
// json.dumps(..., indent=2, sort_keys=True)) puts "grad_norm": Infinity in log_history on an fp16
// overflow step, and best_metric stays -Infinity until a first comparison succeeds. A strict parse
// would refuse the whole trainer_state.json.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

namespace ckpt {

/// Parses `text` as JSON, accepting NaN, Infinity and -Infinity outside strings as the floating
/// point values they name. Throws nlohmann::json::parse_error like json::parse otherwise.
nlohmann::json parsePythonJson(std::string_view text);

} // namespace ckpt
