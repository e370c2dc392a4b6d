// SPDX-License-Identifier: MIT
#include "ui/treepage.h"

#include "ui/copyaction.h"
#include "ui/models/objecttreemodel.h"

#include <QHeaderView>
#include <QTreeView>
#include <QVBoxLayout>

TreePage::TreePage(QWidget* parent)
    : QWidget(parent)
    , m_model(new ObjectTreeModel(this))
    , m_view(new QTreeView(this))
{
    m_view->setModel(m_model);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->header()->setStretchLastSection(true);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    installCopyAction(m_view); // a key path, a class path or a value, as shown

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_view);
}

void TreePage::setFile(const std::shared_ptr<const ckpt::CheckpointFile>& file)
{
    m_model->setFile(file);
    const QModelIndex root = m_model->index(0, 0);
    if (!root.isValid())
        return;
    m_view->expand(root);
    // Sized for the first level, with room for the indentation of deeper ones, within limits.
    for (const auto column : {ObjectTreeModel::Key, ObjectTreeModel::Type}) {
        m_view->resizeColumnToContents(column);
        m_view->setColumnWidth(column, qBound(column == ObjectTreeModel::Key ? 240 : 160, m_view->columnWidth(column) + 24, 360));
    }
}
