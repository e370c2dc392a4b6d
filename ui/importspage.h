// SPDX-License-Identifier: MIT
// The "Imports" tab: the verdict in one line above the table of globals the pickles reference.
#pragma once

#include <QWidget>

#include <memory>

namespace ckpt {
class CheckpointFile;
}
class ImportsModel;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

class ImportsPage final : public QWidget {
    Q_OBJECT
public:
    explicit ImportsPage(QWidget* parent = nullptr);

    void setFile(const std::shared_ptr<const ckpt::CheckpointFile>& file);

    ImportsModel* model() const { return m_model; }
    QLabel* verdictLabel() const { return m_verdict; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateVerdictColour();

    ImportsModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QLabel* m_verdict;
    QTableView* m_view;
    bool m_dangerous = false;
};
