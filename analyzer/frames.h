/* Call-site frames as a person reads them: native frames demangled ("at::native::copy_(...)+0x57
 * (libtorch_cpu.so)"), Python frames ("file:line function", runtime/pyframes.c) split into the
 * user's own and library code (site-packages, the standard library, "<frozen ...>"). */
#ifndef SLACK_FRAMES_H
#define SLACK_FRAMES_H

#include <stddef.h>

/* A C++ symbol ("_Z...") demangled with libstdc++'s __cxa_demangle (dlopened: the slack command
 * does not link libstdc++); a new string, or NULL when it is not mangled or cannot be. */
char *slack_demangle(const char *name);

/* A native frame line "symbol+0xoff (lib)" with the symbol demangled; a new string (the line
 * itself copied when it has nothing to demangle); NULL when out of memory. */
char *frame_demangle(const char *line, size_t len);
/* Every line of a "\n"-separated native stack demangled; a new string or NULL. */
char *frames_demangle(const char *stack);

/* One Python frame line "file:line function" split in place into its parts (file and function
 * point into the line, not NUL-terminated: *file_len, *fn_len). 0 when the line is not one. */
int pyframe_parse(const char *line, size_t len, const char **file, size_t *file_len, long *lineno,
                  const char **fn, size_t *fn_len);
/* 1 when a Python file is the user's own: not under site-packages or dist-packages, not the
 * standard library, not "<frozen ...>" or "<string>". */
int pyframe_is_user(const char *file, size_t len);
/* The innermost user frame of a Python stack (its first line when none is the user's): its
 * offset and length in the stack. */
void pyframes_user(const char *stack, size_t *off, size_t *len);
/* 1 when one of the stack's frames is `frame` (a whole line, len bytes): the stack runs code
 * called from that statement. */
int pyframes_has(const char *stack, const char *frame, size_t len);
/* 1 when one of the stack's first `upto` bytes of frames (those inside its innermost user frame,
 * pyframes_user's offset) runs in a data-loading library: PyTorch's DataLoader and datasets
 * (torch/utils/data), torchvision's datasets, transforms and io (not its models and ops), PIL,
 * Hugging Face's datasets and tokenizers, webdataset,
 * DALI, FFCV: the work of preparing a batch, whatever line calls it. */
int pyframes_loading(const char *stack, size_t upto);
/* 1 when the stack waits for another thread or process in the standard library's hand-over
 * primitives (one of its 3 innermost frames, all library code): threading (a Condition, an
 * Event, a lock, a join), queue, concurrent.futures (a Future's result), multiprocessing (its
 * queues and connections, where a DataLoader's main thread takes its workers' batches). */
int pyframes_waits(const char *stack);
/* 1 when the stack is capturing a Python stack: its innermost frames, library code, in the
 * standard library's traceback module (extracting or formatting frames; the source lines it
 * reads through linecache and tokenize) or torch.fx's traceback (autograd's anomaly detection
 * stores each forward operation's stack through it). */
int pyframes_capture(const char *stack);
/* That frame as a short name, "train.py:87 train_step" (the file's base name) into buf; 0 when
 * the stack has no parsable frame (buf then holds ""). */
int pyframes_user_short(const char *stack, char *buf, size_t cap);

#endif
