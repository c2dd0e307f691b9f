;; Metis Memory for Emacs (eglot: built in from Emacs 29; Debian's elpa-eglot on 28): the
;; language server on .metis/MEMORY.md and .metis/USER.md, whatever the project root.
;; The command defaults to `metis-memory lsp` (pipx install metis-agent-memory).
(require 'eglot)

(define-derived-mode metis-memory-mode text-mode "Metis"
  "Mode for Metis Memory files (derive it from `markdown-mode' if you have that).")

(add-to-list 'auto-mode-alist
             '("/\\.metis/\\(?:MEMORY\\|USER\\)\\.md\\'" . metis-memory-mode))
(add-to-list 'eglot-server-programs '(metis-memory-mode "metis-memory" "lsp"))
(add-hook 'metis-memory-mode-hook #'eglot-ensure)
