// SPDX-License-Identifier: MIT
// The "Tensors" tab: a key filter above the sortable tensor table.
#pragma once

#include <QWidget>

#include <memory>

namespace ckpt {
class CheckpointFile;
}
class QLabel;
class QLineEdit;
class QTableView;
class TensorProxyModel;
class TensorTableModel;

class TensorsPage final : public QWidget {
    Q_OBJECT
public:
    explicit TensorsPage(QWidget* parent = nullptr);

    void setFile(const std::shared_ptr<const ckpt::CheckpointFile>& file);

    TensorTableModel* model() const { return m_model; }
    TensorProxyModel* proxy() const { return m_proxy; }
    QTableView* view() const { return m_view; }
    QLineEdit* filterEdit() const { return m_filter; }

private:
    void updateSummary();

    TensorTableModel* m_model;
    TensorProxyModel* m_proxy;
    QLineEdit* m_filter;
    QLabel* m_summary;
    QTableView* m_view;
    QLabel* m_empty;
    std::shared_ptr<const ckpt::CheckpointFile> m_file;
};
