// SPDX-License-Identifier: MIT
#include "commands.h"
#include "text_format.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ckpt/report/json_export.h"

#include <iostream>
#include <unordered_set>

namespace {

using namespace ckpt;

constexpr std::size_t kMaxChildrenShown = 24;

class TreePrinter {
public:
    TreePrinter(const CheckpointFile& file, std::size_t maxDepth) : m_file(file), m_graph(file.graph()), m_maxDepth(maxDepth) {}

    void print(const std::string& label, NodeId id, std::size_t depth)
    {
        const std::string indent(depth * 2, ' ');
        const Node& n = m_graph[id];
        std::cout << indent << label << summary(id) << '\n';
        const bool container = n.kind == Kind::Dict || n.kind == Kind::List || n.kind == Kind::Tuple || n.kind == Kind::Object;
        if (!container || depth >= m_maxDepth)
            return;
        if (!m_entered.insert(id).second) {
            std::cout << indent << "  (shown above)\n";
            return;
        }
        std::size_t shown = 0, total = 0;
        auto child = [&](const std::string& childLabel, NodeId childId) {
            ++total;
            if (shown++ < kMaxChildrenShown)
                print(childLabel, childId, depth + 1);
        };
        if (n.kind == Kind::Dict) {
            for (std::size_t i = 0; i + 1 < n.items.size(); i += 2)
                child(keyLabel(n.items[i]) + ": ", n.items[i + 1]);
        } else if (n.kind == Kind::List || n.kind == Kind::Tuple) {
            if (allScalars(n))
                return; // summary already shows them
            for (std::size_t i = 0; i < n.items.size(); ++i)
                child("[" + std::to_string(i) + "]: ", n.items[i]);
        } else {
            if (m_graph.valid(n.a))
                child("(args): ", n.a);
            if (m_graph.valid(n.state))
                child("(state): ", n.state);
        }
        if (total > kMaxChildrenShown)
            std::cout << indent << "  ... " << (total - kMaxChildrenShown) << " more\n";
    }

private:
    std::string keyLabel(NodeId key) const
    {
        const Node& k = m_graph[key];
        return k.kind == Kind::String ? k.text : reprOf(m_graph, key, 60);
    }

    bool allScalars(const Node& n) const
    {
        for (NodeId item : n.items) {
            const Kind k = m_graph[item].kind;
            if (k != Kind::Int && k != Kind::Float && k != Kind::Bool && k != Kind::None && k != Kind::BigInt)
                return false;
        }
        return true;
    }

    std::string summary(NodeId id) const
    {
        const Node& n = m_graph[id];
        switch (n.kind) {
        case Kind::Dict:
            return (n.text.empty() ? "dict" : n.text) + " (" + std::to_string(n.items.size() / 2) + " items)";
        case Kind::List:
        case Kind::Tuple: {
            std::string s = (n.text.empty() ? kindName(n.kind) : n.text) + std::string(" (") + std::to_string(n.items.size()) + " items)";
            if (allScalars(n) && !n.items.empty()) {
                std::string values;
                for (std::size_t i = 0; i < n.items.size() && values.size() < 60; ++i)
                    values += (i ? ", " : "") + reprOf(m_graph, n.items[i]);
                s += " " + values + (values.size() >= 60 ? ", ..." : "");
            }
            return s;
        }
        case Kind::Object:
            return "object " + n.text;
        case Kind::Tensor: {
            const TensorInfo& t = m_file.tensors()[n.ref];
            std::string s = "tensor " + t.dtypeName + " " + formatShape(t.shape) + " " + humanBytes(t.nbytes());
            if (t.layout != TensorLayout::Strided)
                s += std::string(" ") + layoutName(t.layout);
            if (t.isParameter)
                s += " parameter";
            if (!t.device.empty() && t.device != "cpu")
                s += " on " + t.device;
            if (!t.problem.empty())
                s += " (" + t.problem + ")";
            return s;
        }
        case Kind::NdArray: {
            const NdArrayInfo& a = m_file.document().arrays[n.ref];
            return "ndarray " + a.dtype + " " + formatShape(a.shape);
        }
        case Kind::Set:
        case Kind::FrozenSet:
            return std::string(kindName(n.kind)) + " (" + std::to_string(n.items.size()) + " items)";
        case Kind::Size: {
            std::vector<int64_t> dims;
            for (NodeId d : n.items)
                dims.push_back(m_graph[d].i);
            return "torch.Size(" + formatShape(dims) + ")";
        }
        case Kind::Invalid:
            return "<unreadable: " + n.text + ">";
        case Kind::Global:
            return "<reference to " + n.text + ">";
        case Kind::NpDtype:
            return "numpy.dtype(" + n.text + ")";
        case Kind::Layout:
            return n.text;
        default:
            return reprOf(m_graph, id, 100);
        }
    }

    const CheckpointFile& m_file;
    const ValueGraph& m_graph;
    std::size_t m_maxDepth;
    std::unordered_set<NodeId> m_entered;
};

} // namespace

int runTree(const CliArgs& args)
{
    if (args.positional.size() != 1)
        return failWith("usage: ckpt tree FILE [--json] [--depth N]");
    std::unique_ptr<CheckpointFile> file;
    try {
        file = CheckpointFile::open(args.positional[0]);
    } catch (const std::exception& e) {
        return failWith(e.what());
    }
    if (args.has("--json")) {
        std::cout << dumpJson(treeReportToJson(*file)) << '\n';
        return kExitOk;
    }
    std::size_t depth = 64;
    if (auto d = args.option("--depth"))
        depth = static_cast<std::size_t>(std::max(0, std::atoi(d->c_str())));
    std::cout << file->path() << " (" << formatName(file->format()) << ", " << humanBytes(file->fileSize()) << ")\n";
    TreePrinter(*file, depth).print("", file->root(), 0);
    for (const auto& w : file->warnings())
        std::cout << "warning: " << w << "\n";
    return kExitOk;
}
