// SPDX-License-Identifier: MIT
// One tensor of `ckpt tensors --json`, written straight into text: the bytes tensorEntryToJson's
// object dumps to (keys in the order nlohmann's sorted object keeps them, its number and string
// forms), without building that object. On a 90k-tensor frontier model building and dumping one
// object per tensor was a third of the listing (perf, issue 16). tst_json_export compares the two
// writers on every tensor of the corpus and the sample runs.
#include "ckpt/report/json_export.h"

#include <charconv>

namespace ckpt {
namespace {

/// Text that nlohmann dumps as it is: printable ASCII without '"' or '\\'.
bool plainText(std::string_view s)
{
    for (const char c : s) {
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
            return false;
    }
    return true;
}

class EntryText {
public:
    explicit EntryText(std::string& out) : m_out(out) {}

    /// Starts the next field: `name` must come after the previous one in byte order.
    EntryText& key(std::string_view name)
    {
        m_out += m_first ? "{\"" : ",\"";
        m_first = false;
        m_out += name;
        m_out += "\":";
        return *this;
    }
    void string(std::string_view s)
    {
        if (plainText(s)) {
            m_out += '"';
            m_out += s;
            m_out += '"';
        } else {
            m_out += dumpJson(nlohmann::json(std::string(s))); // escapes and invalid UTF-8 as nlohmann does
        }
    }
    template<typename Int>
    void integer(Int v)
    {
        char buffer[24];
        const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
        m_out.append(buffer, end);
    }
    void boolean(bool v) { m_out += v ? "true" : "false"; }
    void integers(const std::vector<int64_t>& values)
    {
        m_out += '[';
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (i)
                m_out += ',';
            integer(values[i]);
        }
        m_out += ']';
    }
    void keyPath(const KeyPath& path)
    {
        m_out += '[';
        for (std::size_t i = 0; i < path.size(); ++i) {
            if (i)
                m_out += ',';
            if (const auto* n = std::get_if<int64_t>(&path[i]))
                integer(*n);
            else
                string(std::get<std::string>(path[i]));
        }
        m_out += ']';
    }
    void raw(const nlohmann::json& value) { m_out += dumpJson(value); }
    void close() { m_out += m_first ? "{}" : "}"; }

private:
    std::string& m_out;
    bool m_first = true;
};

} // namespace

void appendTensorEntryJson(std::string& out, const CheckpointFile& file, const TensorEntry& entry)
{
    // The fields of tensorFields (json_export.cpp), in sorted order.
    const TensorInfo& t = file.tensors()[entry.tensor];
    const bool quantized = t.layout == TensorLayout::Quantized;
    const bool perTensor = quantized && t.quantizer.scheme.starts_with("per_tensor");
    EntryText j(out);
    if (entry.alias)
        j.key("alias").boolean(true);
    if (quantized && !perTensor)
        j.key("axis").integer(t.quantizer.axis);
    j.key("device").string(t.device);
    j.key("dtype").string(t.dtypeName.empty() ? std::string_view(dtypeName(t.dtype)) : std::string_view(t.dtypeName));
    if (!t.flags.empty())
        j.key("flags").string(t.flags);
    j.key("is_parameter").boolean(t.isParameter);
    j.key("key").keyPath(entry.key);
    j.key("layout").string(layoutName(t.layout));
    j.key("nbytes").integer(t.nbytes());
    if (!t.problem.empty())
        j.key("problem").string(t.problem);
    if (quantized)
        j.key("qscheme").string(t.quantizer.scheme);
    j.key("requires_grad").boolean(t.requiresGrad);
    if (perTensor)
        j.key("scale").raw(jsonNumber(t.quantizer.scale));
    j.key("shape").integers(t.shape);
    if (t.storage >= 0)
        j.key("storage").string(file.storages()[static_cast<std::size_t>(t.storage)].key);
    j.key("storage_offset").integer(t.storageOffset);
    j.key("stride").integers(t.stride);
    if (!t.subclass.empty())
        j.key("subclass").string(t.subclass);
    if (perTensor)
        j.key("zero_point").integer(t.quantizer.zeroPoint);
    j.close();
}

} // namespace ckpt
