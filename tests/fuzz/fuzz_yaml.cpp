// SPDX-License-Identifier: MIT
// YAML configs (NeMo's model_config.yaml, hparams.yaml, context/model.yaml; torchtune's and
// Lightning's configs) into JSON through libyaml's event parser: scalar typing (YAML 1.1 and
// OmegaConf's floats), anchors and aliases under the node limit, nesting under the depth limit.
// The value is then dumped the way the CLI prints it.
#include "fuzz_support.h"

#include "ckpt/formats/yaml_json.h"
#include "ckpt/report/json_export.h"

#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ckpt::fuzz::refusalsAreFine([&] {
        const nlohmann::json j = ckpt::parseYaml(text);
        (void)ckpt::dumpJson(j);
    });
    // The limits a smaller budget gives: the checks themselves, reached by small inputs.
    ckpt::fuzz::refusalsAreFine([&] { (void)ckpt::parseYaml(text, ckpt::YamlLimits{8, 64}); });
    return 0;
}
