// SPDX-License-Identifier: MIT
// The "Tree" tab: the saved object, expanded one level to start with.
#pragma once

#include <QWidget>

#include <memory>

namespace ckpt {
class CheckpointFile;
}
class ObjectTreeModel;
class QTreeView;

class TreePage final : public QWidget {
    Q_OBJECT
public:
    explicit TreePage(QWidget* parent = nullptr);

    void setFile(const std::shared_ptr<const ckpt::CheckpointFile>& file);

    ObjectTreeModel* model() const { return m_model; }
    QTreeView* view() const { return m_view; }

private:
    ObjectTreeModel* m_model;
    QTreeView* m_view;
};
