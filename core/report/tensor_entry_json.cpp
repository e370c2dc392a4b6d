// SPDX-License-Identifier: MIT
// One tensor of `ckpt tensors --json`, written straight into text: the bytes tensorEntryToJson's
// object dumps to (keys in the order nlohmann's sorted object keeps them, its number and string
// forms), without building that object; with statistics, the "stats" object of tensorStatsToJson
// too. On a 90k-tensor frontier model building and dumping one object per tensor was a third of
// the listing and half of the statistics' CPU time, spent under the lock the scanning threads
// share (perf, issue 16). tst_json_export compares the writers on every tensor of the corpus and
// the sample runs.
#include "ckpt/report/json_export.h"
#include "ckpt/stats/tensor_stats.h"

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
    /// [1,2,3]: a shape, a stride, histogram counts.
    template<typename Int>
    void integers(const std::vector<Int>& values)
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
    /// A double as jsonNumber gives it: nlohmann's shortest form, or "nan", "inf", "-inf".
    void number(double v) { raw(jsonNumber(v)); }
    /// {"counts", "hi", "lo"}, or null when nothing was binned (histogramToJson).
    void histogram(const Histogram& h)
    {
        if (h.counts.empty()) {
            m_out += "null";
            return;
        }
        EntryText j(m_out);
        j.key("counts").integers(h.counts);
        j.key("hi").number(h.hi);
        j.key("lo").number(h.lo);
        j.close();
    }
    /// tensorStatsToJson's object (stats_json.cpp), keys in its sorted order.
    void stats(const TensorStats& s)
    {
        EntryText j(m_out);
        if (!s.ok()) {
            j.key("numel").integer(s.numel);
            j.key("problem").string(s.problem);
            j.close();
            return;
        }
        j.key("absmax").number(s.absmax);
        j.key("exact_hist").boolean(s.exactHistograms);
        j.key("exact_log_hist").boolean(s.exactLogHistogram);
        j.key("hist").histogram(s.hist);
        j.key("hist_uncertain").integer(s.histUncertain);
        j.key("l2").number(s.l2);
        j.key("log10_abs_hist").histogram(s.logHist);
        j.key("log_hist_uncertain").integer(s.logHistUncertain);
        j.key("max").number(s.max);
        j.key("mean").number(s.mean);
        j.key("min").number(s.min);
        j.key("nan").integer(s.nan);
        j.key("neginf").integer(s.neginf);
        j.key("numel").integer(s.numel);
        if (s.complexMagnitude)
            j.key("of").string("magnitude");
        j.key("posinf").integer(s.posinf);
        j.key("std").number(s.std);
        j.key("zeros").integer(s.zeros);
        j.close();
    }
    void close() { m_out += m_first ? "{}" : "}"; }

private:
    std::string& m_out;
    bool m_first = true;
};

} // namespace

void appendTensorEntryJson(std::string& out, const CheckpointFile& file, const TensorEntry& entry, const TensorStats* stats)
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
    if (stats)
        j.key("stats").stats(*stats);
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
