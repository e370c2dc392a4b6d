// SPDX-License-Identifier: MIT
// The saved object as a tree (Key, Type, Value). Rows are built when a view expands them, and a
// container reached a second time shows "(same object as ...)" instead of its contents.
#pragma once

#include <QAbstractItemModel>
#include <QHash>

#include <memory>

namespace ckpt {
class CheckpointFile;
}
class ObjectTree;
class ObjectTreeItem;

class ObjectTreeModel final : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Key, Type, Value, ColumnCount };
    enum Role {
        KeyPathRole = Qt::UserRole, // QString: the full key path ("optimizer.state.0.step")
        IsRepeatRole,               // bool: a container shown in full elsewhere
    };
    Q_ENUM(Column)

    explicit ObjectTreeModel(QObject* parent = nullptr);
    ~ObjectTreeModel() override;

    void setFile(std::shared_ptr<const ckpt::CheckpointFile> file);
    const std::shared_ptr<const ckpt::CheckpointFile>& file() const { return m_file; }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    bool hasChildren(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    ObjectTreeItem* itemFor(const QModelIndex& index) const;
    QString typeText(const ObjectTreeItem& item) const;
    QString valueText(const ObjectTreeItem& item) const;

    std::shared_ptr<const ckpt::CheckpointFile> m_file;
    std::unique_ptr<ObjectTree> m_tree;
    mutable QHash<quint32, QString> m_firstPathText; // painting asks often; the walk up is not free
};
