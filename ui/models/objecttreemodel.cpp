// SPDX-License-Identifier: MIT
#include "ui/models/objecttreemodel.h"

#include "ckpt/formats/checkpoint_file.h"
#include "ui/models/objecttree.h"
#include "ui/textformat.h"

#include <filesystem>

using namespace ckpt;

namespace {

bool isScalar(const ValueGraph& graph, NodeId id)
{
    switch (graph[id].kind) {
    case Kind::None:
    case Kind::Bool:
    case Kind::Int:
    case Kind::BigInt:
    case Kind::Float:
        return true;
    default:
        return false;
    }
}

QString itemCount(std::size_t n)
{
    return n == 1 ? ObjectTreeModel::tr("1 item") : ObjectTreeModel::tr("%1 items").arg(n);
}

/// "0.9, 0.999" for short all-scalar sequences (like `ckpt tree`), empty otherwise.
QString scalarPreview(const ValueGraph& graph, const std::vector<NodeId>& items)
{
    QString out;
    for (const NodeId item : items) {
        if (!isScalar(graph, item))
            return {};
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (out.size() >= 60)
            return out + QStringLiteral(", ...");
        if (i)
            out += QStringLiteral(", ");
        out += fromUtf8(reprOf(graph, items[i]));
    }
    return out;
}

} // namespace

ObjectTreeModel::ObjectTreeModel(QObject* parent)
    : QAbstractItemModel(parent)
{
}

ObjectTreeModel::~ObjectTreeModel() = default;

void ObjectTreeModel::setFile(std::shared_ptr<const CheckpointFile> file)
{
    beginResetModel();
    m_tree.reset();
    m_firstPathText.clear();
    m_file = std::move(file);
    if (m_file) {
        const std::string name = std::filesystem::path(m_file->path()).filename().string();
        m_tree = std::make_unique<ObjectTree>(m_file->graph(), m_file->root(), name);
    }
    endResetModel();
}

ObjectTreeItem* ObjectTreeModel::itemFor(const QModelIndex& index) const
{
    if (!m_tree)
        return nullptr;
    return index.isValid() ? static_cast<ObjectTreeItem*>(index.internalPointer()) : m_tree->top();
}

QModelIndex ObjectTreeModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent))
        return {};
    ObjectTreeItem* item = itemFor(parent);
    return createIndex(row, column, m_tree->children(item)[static_cast<std::size_t>(row)].get());
}

QModelIndex ObjectTreeModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || !m_tree)
        return {};
    ObjectTreeItem* parent = itemFor(child)->parent();
    if (!parent || parent == m_tree->top())
        return {};
    return createIndex(parent->row(), 0, parent);
}

int ObjectTreeModel::rowCount(const QModelIndex& parent) const
{
    if (parent.column() > 0 || !m_tree)
        return 0;
    return static_cast<int>(m_tree->children(itemFor(parent)).size());
}

int ObjectTreeModel::columnCount(const QModelIndex& parent) const
{
    return parent.column() > 0 ? 0 : ColumnCount;
}

bool ObjectTreeModel::hasChildren(const QModelIndex& parent) const
{
    if (parent.column() > 0 || !m_tree)
        return false;
    return m_tree->hasChildren(itemFor(parent));
}

QVariant ObjectTreeModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || !hasIndex(index.row(), index.column(), index.parent()))
        return {};
    const ObjectTreeItem& item = *itemFor(index);
    switch (role) {
    case Qt::DisplayRole:
        switch (static_cast<Column>(index.column())) {
        case Key:
            return fromUtf8(item.label());
        case Type:
            return typeText(item);
        case Value:
            return valueText(item);
        case ColumnCount:
            break;
        }
        break;
    case Qt::ToolTipRole:
        return index.column() == Key ? formatKey(item.path()) : valueText(item);
    case KeyPathRole:
        return formatKey(item.path());
    case IsRepeatRole:
        return item.isRepeat();
    default:
        break;
    }
    return {};
}

QVariant ObjectTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    switch (static_cast<Column>(section)) {
    case Key:
        if (role == Qt::DisplayRole)
            return tr("Key");
        if (role == Qt::ToolTipRole)
            return tr("Dict key, [index] in a sequence, attribute name of an object, or (args)/(state) for the parts "
                      "of an object that are not attributes");
        break;
    case Type:
        if (role == Qt::DisplayRole)
            return tr("Type");
        if (role == Qt::ToolTipRole)
            return tr("Python type as saved; objects show their class path");
        break;
    case Value:
        if (role == Qt::DisplayRole)
            return tr("Value / Summary");
        if (role == Qt::ToolTipRole)
            return tr("The value of simple items; dtype, shape and size of tensors; the item count of containers. "
                      "A container reached a second time is shown once and then referred to");
        break;
    case ColumnCount:
        break;
    }
    return {};
}

QString ObjectTreeModel::typeText(const ObjectTreeItem& item) const
{
    const ValueGraph& graph = m_file->graph();
    const Node& n = graph[item.node()];
    switch (n.kind) {
    case Kind::Dict:
    case Kind::List:
    case Kind::Tuple:
    case Kind::Object:
        return n.text.empty() ? QLatin1String(kindName(n.kind)) : fromUtf8(n.text);
    case Kind::Tensor: {
        const TensorInfo& t = m_file->tensors()[n.ref];
        if (!t.subclass.empty())
            return fromUtf8(t.subclass);
        return t.isParameter ? QStringLiteral("Parameter") : QStringLiteral("tensor");
    }
    case Kind::None:
        return QStringLiteral("NoneType");
    case Kind::BigInt:
        return QStringLiteral("int");
    case Kind::Size:
        return QStringLiteral("torch.Size");
    case Kind::Dtype:
        return QStringLiteral("torch.dtype");
    case Kind::Device:
        return QStringLiteral("torch.device");
    case Kind::Layout:
        return QStringLiteral("torch.layout");
    case Kind::NdArray:
        return QStringLiteral("numpy.ndarray");
    case Kind::NpDtype:
        return QStringLiteral("numpy.dtype");
    case Kind::Invalid:
        return tr("unreadable");
    default:
        return QLatin1String(kindName(n.kind));
    }
}

QString ObjectTreeModel::valueText(const ObjectTreeItem& item) const
{
    const ValueGraph& graph = m_file->graph();
    const NodeId id = item.node();
    const Node& n = graph[id];
    if (item.isRepeat()) {
        auto it = m_firstPathText.constFind(id);
        if (it == m_firstPathText.constEnd())
            it = m_firstPathText.insert(id, formatKey(m_tree->firstPath(id)));
        return tr("(same object as %1)").arg(*it);
    }
    switch (n.kind) {
    case Kind::Dict:
        return itemCount(n.items.size() / 2);
    case Kind::List:
    case Kind::Tuple:
    case Kind::Set:
    case Kind::FrozenSet: {
        const QString preview = scalarPreview(graph, n.items);
        return preview.isEmpty() ? itemCount(n.items.size()) : itemCount(n.items.size()) + QStringLiteral(": ") + preview;
    }
    case Kind::Object: {
        const std::size_t children = objectChildren(graph, id, false).size();
        return children ? itemCount(children) : QString();
    }
    case Kind::Tensor:
        return tensorSummary(m_file->tensors()[n.ref]);
    case Kind::NdArray: {
        const NdArrayInfo& a = m_file->document().arrays[n.ref];
        QString s = fromUtf8(a.dtype) + QLatin1Char(' ') + formatShape(a.shape);
        if (!a.problem.empty())
            s += QStringLiteral(" (") + fromUtf8(a.problem) + QLatin1Char(')');
        return s;
    }
    case Kind::Storage: {
        const StorageInfo& s = m_file->storages()[n.ref];
        return QLatin1String(dtypeName(s.dtype).data(), static_cast<qsizetype>(dtypeName(s.dtype).size())) + QLatin1Char(' ')
            + tr("storage of %1 elements").arg(s.numel);
    }
    case Kind::Size: {
        std::vector<int64_t> dims;
        for (const NodeId d : n.items)
            dims.push_back(graph[d].i);
        return QStringLiteral("torch.Size(") + formatShape(dims) + QLatin1Char(')');
    }
    case Kind::Invalid:
        return fromUtf8(n.text);
    case Kind::Global:
        return tr("reference to %1").arg(fromUtf8(n.text));
    case Kind::NpDtype:
    case Kind::Layout:
        return fromUtf8(n.text);
    default:
        return fromUtf8(reprOf(graph, id, 200));
    }
}
