// SPDX-License-Identifier: MIT
// What could not be read, listed quietly in place (path and reason, in the warning colour) instead
// of a dialog per file; hidden while there is nothing to say.
#pragma once

#include <QWidget>

class QLabel;
class QListWidget;

class ErrorPanel final : public QWidget {
    Q_OBJECT
public:
    explicit ErrorPanel(const QString& title, QWidget* parent = nullptr);

    void addError(const QString& path, const QString& reason);
    void clear();
    int count() const;
    QListWidget* list() const { return m_list; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateColours();

    QLabel* m_title;
    QListWidget* m_list;
};
