;;; probe.el --- drive docs/editors.md's Emacs configuration headless  -*- lexical-binding: t -*-
;;
;; Loaded after the configuration (the one docs/editors.md shows, checked by test_emacs.py). Opens
;; $METIS_EMACS_FILE, waits (bounded) for eglot to connect and flymake to show the
;; server's diagnostics, asks the server for the hover and the code actions at the cap
;; diagnostic, runs "Tidy MEMORY.md" through eglot's own code-action command (its menu
;; answered by a stub), saves, waits for the new diagnostics, and writes what it saw as
;; JSON to $METIS_EMACS_OUT. Any failure is written there too, with what was seen so far.

(require 'cl-lib)
(require 'json)
(require 'eglot)
(require 'flymake)

(defvar metis-probe-timeout 30.0 "Seconds each wait may take.")
(defvar metis-probe-result nil "An alist of what was seen, written out at the end.")

(defun metis-probe-note (key value)
  "Record VALUE (a string, or a list of strings or of lists of those) under KEY."
  (setq metis-probe-result (cons (cons key (metis-probe-json value)) metis-probe-result)))

(defun metis-probe-json (value)
  "VALUE with lists as vectors, so `json-encode' writes arrays (an empty one too)."
  (cond ((stringp value) value)
        ((listp value) (vconcat (mapcar #'metis-probe-json value)))
        (t value)))

(defun metis-probe-wait (what predicate)
  "Let processes and timers run until PREDICATE holds, at most `metis-probe-timeout'."
  (let ((deadline (+ (float-time) metis-probe-timeout)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "Timed out after %ss waiting for %s" metis-probe-timeout what))
      (accept-process-output nil 0.05))))

(defun metis-probe-diagnostics ()
  "Flymake's diagnostics in the buffer as (LINE TYPE TEXT), sorted."
  (sort (mapcar (lambda (d)
                  (list (1- (line-number-at-pos (flymake-diagnostic-beg d)))
                        (symbol-name (flymake-diagnostic-type d))
                        (flymake-diagnostic-text d)))
                (flymake-diagnostics))
        (lambda (a b) (< (car a) (car b)))))

(defun metis-probe-cap-position ()
  (let ((cap (cl-find-if (lambda (d) (string-match-p "soft cap" (flymake-diagnostic-text d)))
                         (flymake-diagnostics))))
    (unless cap (error "No soft-cap diagnostic among %S" (metis-probe-diagnostics)))
    (flymake-diagnostic-beg cap)))

(defun metis-probe-run ()
  (find-file (getenv "METIS_EMACS_FILE"))
  (metis-probe-note 'major-mode (symbol-name major-mode))
  ;; eglot-ensure connects after the current command; batch mode has no command loop.
  (run-hooks 'post-command-hook)
  (metis-probe-wait "eglot to manage the buffer" (lambda () (bound-and-true-p eglot--managed-mode)))
  (let ((server (eglot-current-server)))
    (metis-probe-note 'project-root
                      (expand-file-name (project-root (eglot--project server))))
    (flymake-start)
    (metis-probe-wait "the soft-cap diagnostic in flymake"
                      (lambda ()
                        (cl-some (lambda (d) (string-match-p "soft cap" (flymake-diagnostic-text d)))
                                 (flymake-diagnostics))))
    (metis-probe-note 'diagnostics (metis-probe-diagnostics))
    (let ((hover (jsonrpc-request server :textDocument/hover
                                  (list :textDocument (eglot--TextDocumentIdentifier)
                                        :position (list :line 0 :character 0)))))
      (metis-probe-note 'hover-kind (plist-get (plist-get hover :contents) :kind))
      (metis-probe-note 'hover-value (plist-get (plist-get hover :contents) :value)))
    (let* ((pos (metis-probe-cap-position))
           (actions (eglot-code-actions pos pos)))
      (metis-probe-note 'actions (mapcar (lambda (a) (plist-get a :title)) actions))
      (metis-probe-note 'action-commands
                        (delq nil (mapcar (lambda (a)
                                            (let ((c (plist-get a :command)))
                                              (if (stringp c) c (plist-get c :command))))
                                          actions)))
      ;; Choose "Tidy MEMORY.md" in eglot's own menu, as a user would.
      (cl-letf (((symbol-function 'completing-read) (lambda (&rest _) "Tidy MEMORY.md")))
        (let ((last-nonmenu-event ?\r))
          (goto-char pos)
          (eglot-code-actions pos pos nil t))))
    (save-buffer)
    (metis-probe-wait "the tidied file's diagnostics"
                      (lambda ()
                        (not (cl-some (lambda (d) (string-match-p "[Dd]uplicate" (flymake-diagnostic-text d)))
                                      (flymake-diagnostics)))))
    (metis-probe-note 'diagnostics-after (metis-probe-diagnostics))
    (metis-probe-note 'text-after (buffer-substring-no-properties (point-min) (point-max)))
    (eglot-shutdown server)))

(defun metis-probe-write ()
  (with-temp-file (getenv "METIS_EMACS_OUT")
    (insert (json-encode metis-probe-result))))

(condition-case err
    (metis-probe-run)
  (error (metis-probe-note 'error (error-message-string err))))
(metis-probe-write)
(kill-emacs 0)
