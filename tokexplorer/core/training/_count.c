/* tokexplorer.core.training._count: a corpus's distinct chunks and their counts, compiled.
 *
 * ChunkCounts holds the distinct chunks seen so far (their UTF-8 bytes, copied into one arena) with
 * their occurrences, in order of first occurrence (what the merge loop's tie rule needs: see
 * counting.py). Chunks come in three ways:
 *
 *   - split_gpt4(data, start, end): data[start:end], when it is all ASCII, split by GPT-4's pattern
 *     (patterns.GPT4_SPLIT_PATTERN) and each chunk counted, with no Python object per chunk; False
 *     (and nothing counted) when the stretch holds a byte of 0x80 or more: the caller splits such
 *     text with the `regex` module and hands the chunks to add();
 *   - add(chunks): each chunk of an iterable of bytes or str (counted in UTF-8) counted once;
 *   - add_counts(chunks, counts): another count's chunks with their counts (a worker's block).
 *
 * chunks() and counts() give the result as two lists, what the merge loop takes.
 *
 * The split is the pattern's, hand-written for ASCII text and checked against the `regex` module
 * (tests/core/test_compiled_counting.py: every short string of the characters that matter, and
 * hypothesis texts). On ASCII the pattern's classes are: letters A-Z a-z; digits 0-9; whitespace
 * \t \n \x0b \x0c \r and space (the `regex` module's \s, Unicode's White_Space: not \x1c-\x1f);
 * everything else "other". Its alternatives, tried in order at each position, and what each
 * takes there:
 *
 *   1. '(?i:[sdmt]|ll|ve|re)     an apostrophe and a contraction, either case
 *   2. [^\r\n\p{L}\p{N}]?+\p{L}++ a letter run, with one character before it that is neither a line
 *                                end, a letter nor a digit
 *   3. \p{N}{1,3}+               up to three digits
 *   4.  ?[^\s\p{L}\p{N}]++[\r\n]*+ an optional space, a run of "other", then any line ends
 *   5. \s++$                     a whitespace run that reaches the end of the text
 *   6. \s*[\r\n]                 a whitespace run up to its last line end
 *   7. \s+(?!\S)                 a whitespace run but its last character (which leaves a space
 *                                before what follows)
 *   8. \s                        one whitespace character
 *
 * Every position matches one of them, so the chunks tile the text. "The end of the text" is
 * `end`: the caller cuts a corpus only where the pattern splits both sides as it splits the whole.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { OTHER = 0, LETTER = 1, DIGIT = 2, SPACE = 3 };

/* ASCII byte -> its class under GPT-4's pattern; bytes 0x80 and up are not looked up. */
static unsigned char kind[128];

static void fill_kinds(void)
{
    for (int c = 0; c < 128; c++)
        kind[c] = OTHER;
    for (int c = 'A'; c <= 'Z'; c++)
        kind[c] = kind[c + 32] = LETTER;
    for (int c = '0'; c <= '9'; c++)
        kind[c] = DIGIT;
    kind['\t'] = kind['\n'] = kind['\x0b'] = kind['\x0c'] = kind['\r'] = kind[' '] = SPACE;
}

typedef struct {
    uint64_t hash;
    uint64_t count;
    size_t offset;  /* of the chunk's bytes in the arena */
    size_t len;
} Entry;

typedef struct {
    PyObject_HEAD
    Entry *entries;        /* the distinct chunks in order of first occurrence */
    size_t n_entries, entries_cap;
    uint32_t *table;       /* open addressing: 0 empty, else an index into entries plus one */
    size_t table_mask;
    unsigned char *arena;  /* the chunks' bytes, end to end */
    size_t arena_len, arena_cap;
    unsigned long long total_bytes;  /* every chunk's bytes times its count */
} ChunkCounts;

static inline uint64_t hash_bytes(const unsigned char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ n; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    return h ^ (h >> 29);
}

static int grow_table(ChunkCounts *c)
{
    size_t cap = c->table ? (c->table_mask + 1) * 2 : 1024;
    uint32_t *table = calloc(cap, sizeof *table);
    if (!table)
        return -1;
    for (size_t i = 0; i < c->n_entries; i++) {
        size_t j = c->entries[i].hash & (cap - 1);
        while (table[j])
            j = (j + 1) & (cap - 1);
        table[j] = (uint32_t)(i + 1);
    }
    free(c->table);
    c->table = table;
    c->table_mask = cap - 1;
    return 0;
}

/* Count `n` more occurrences of the chunk s[:len]. */
static int count_chunk(ChunkCounts *c, const unsigned char *s, size_t len, uint64_t n)
{
    if (!c->table && grow_table(c) < 0) /* (made by __new__ without __init__) */
        goto no_memory;
    uint64_t h = hash_bytes(s, len);
    size_t j = h & c->table_mask;
    uint32_t slot;
    while ((slot = c->table[j])) {
        Entry *e = &c->entries[slot - 1];
        if (e->hash == h && e->len == len && memcmp(c->arena + e->offset, s, len) == 0) {
            e->count += n;
            c->total_bytes += len * n;
            return 0;
        }
        j = (j + 1) & c->table_mask;
    }
    if (c->n_entries >= UINT32_MAX - 1) {
        PyErr_SetString(PyExc_OverflowError, "more than 2**32 distinct chunks");
        return -1;
    }
    if (c->n_entries == c->entries_cap) {
        size_t cap = c->entries_cap ? 2 * c->entries_cap : 1024;
        Entry *entries = realloc(c->entries, cap * sizeof *entries);
        if (!entries)
            goto no_memory;
        c->entries = entries;
        c->entries_cap = cap;
    }
    if (c->arena_len + len > c->arena_cap) {
        size_t cap = c->arena_cap ? 2 * c->arena_cap : 1 << 16;
        while (cap < c->arena_len + len)
            cap *= 2;
        unsigned char *arena = realloc(c->arena, cap);
        if (!arena)
            goto no_memory;
        c->arena = arena;
        c->arena_cap = cap;
    }
    memcpy(c->arena + c->arena_len, s, len);
    Entry *e = &c->entries[c->n_entries];
    e->hash = h;
    e->count = n;
    e->offset = c->arena_len;
    e->len = len;
    c->arena_len += len;
    c->total_bytes += len * n;
    c->table[j] = (uint32_t)(++c->n_entries);
    if (2 * c->n_entries > c->table_mask + 1 && grow_table(c) < 0)
        goto no_memory;
    return 0;
no_memory:
    PyErr_NoMemory();
    return -1;
}

static inline size_t run_of(const unsigned char *s, size_t i, size_t end, int k)
{
    while (i < end && kind[s[i]] == k)
        i++;
    return i;
}

static inline int line_end(unsigned char c)
{
    return c == '\r' || c == '\n';
}

/* Where the chunk starting at s[i] ends (see the alternatives above); i < end, s[i:end] ASCII. */
static size_t gpt4_chunk(const unsigned char *s, size_t i, size_t end)
{
    unsigned char c = s[i];
    int k = kind[c];
    if (c == '\'' && i + 1 < end) { /* 1 */
        unsigned char d = s[i + 1] | 0x20; /* lower case for letters; other bytes never match */
        if (d == 's' || d == 'd' || d == 'm' || d == 't')
            return i + 2;
        if (i + 2 < end) {
            unsigned char e = s[i + 2] | 0x20;
            if ((d == 'l' && e == 'l') || (d == 'v' && e == 'e') || (d == 'r' && e == 'e'))
                return i + 3;
        }
    }
    if (k == LETTER) /* 2 */
        return run_of(s, i + 1, end, LETTER);
    if (k != DIGIT && !line_end(c) && i + 1 < end && kind[s[i + 1]] == LETTER)
        return run_of(s, i + 2, end, LETTER);
    if (k == DIGIT) { /* 3 */
        size_t j = i + 1;
        while (j < end && j < i + 3 && kind[s[j]] == DIGIT)
            j++;
        return j;
    }
    size_t from = c == ' ' && i + 1 < end && kind[s[i + 1]] == OTHER ? i + 1 : i; /* 4 */
    if (kind[s[from]] == OTHER) {
        size_t j = run_of(s, from + 1, end, OTHER);
        while (j < end && line_end(s[j]))
            j++;
        return j;
    }
    /* c is whitespace */
    size_t r = run_of(s, i + 1, end, SPACE);
    if (r == end) /* 5 */
        return end;
    for (size_t j = r; j > i; j--) /* 6 */
        if (line_end(s[j - 1]))
            return j;
    if (r - i >= 2) /* 7 */
        return r - 1;
    return i + 1; /* 8 */
}

static PyObject *ChunkCounts_split_gpt4(ChunkCounts *c, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nn:split_gpt4", &view, &start, &end))
        return NULL;
    if (start < 0 || end > view.len || start > end) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "start and end must be within the data, start <= end");
        return NULL;
    }
    const unsigned char *s = view.buf;
    for (Py_ssize_t i = start; i < end; i++)
        if (s[i] >= 0x80) {
            PyBuffer_Release(&view);
            Py_RETURN_FALSE;
        }
    size_t i = (size_t)start;
    while (i < (size_t)end) {
        size_t j = gpt4_chunk(s, i, (size_t)end);
        if (count_chunk(c, s + i, j - i, 1) < 0) {
            PyBuffer_Release(&view);
            return NULL;
        }
        i = j;
    }
    PyBuffer_Release(&view);
    Py_RETURN_TRUE;
}

/* A chunk's UTF-8 bytes: a bytes object's, or a str's (its cached UTF-8 form). */
static int chunk_bytes(PyObject *chunk, const char **s, Py_ssize_t *len)
{
    if (PyBytes_Check(chunk)) {
        *s = PyBytes_AS_STRING(chunk);
        *len = PyBytes_GET_SIZE(chunk);
        return 0;
    }
    if (PyUnicode_Check(chunk)) {
        *s = PyUnicode_AsUTF8AndSize(chunk, len);
        return *s ? 0 : -1;
    }
    PyErr_SetString(PyExc_TypeError, "a chunk must be bytes or str");
    return -1;
}

static PyObject *ChunkCounts_add(ChunkCounts *c, PyObject *chunks)
{
    PyObject *it = PyObject_GetIter(chunks);
    if (!it)
        return NULL;
    PyObject *chunk;
    while ((chunk = PyIter_Next(it))) {
        const char *s;
        Py_ssize_t len;
        int bad = chunk_bytes(chunk, &s, &len) < 0 || (len && count_chunk(c, (const unsigned char *)s,
                                                                          (size_t)len, 1) < 0);
        Py_DECREF(chunk);
        if (bad) {
            Py_DECREF(it);
            return NULL;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *ChunkCounts_add_counts(ChunkCounts *c, PyObject *args)
{
    PyObject *chunks, *counts;
    if (!PyArg_ParseTuple(args, "O!O!:add_counts", &PyList_Type, &chunks, &PyList_Type, &counts))
        return NULL;
    if (PyList_GET_SIZE(chunks) != PyList_GET_SIZE(counts)) {
        PyErr_SetString(PyExc_ValueError, "chunks and counts differ in length");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(chunks); i++) {
        const char *s;
        Py_ssize_t len;
        if (chunk_bytes(PyList_GET_ITEM(chunks, i), &s, &len) < 0)
            return NULL;
        unsigned long long n = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(counts, i));
        if (n == (unsigned long long)-1 && PyErr_Occurred())
            return NULL;
        if (len && n && count_chunk(c, (const unsigned char *)s, (size_t)len, n) < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *ChunkCounts_chunks(ChunkCounts *c, PyObject *Py_UNUSED(ignored))
{
    PyObject *out = PyList_New((Py_ssize_t)c->n_entries);
    for (size_t i = 0; out && i < c->n_entries; i++) {
        PyObject *chunk = PyBytes_FromStringAndSize((const char *)c->arena + c->entries[i].offset,
                                                    (Py_ssize_t)c->entries[i].len);
        if (!chunk) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, chunk);
    }
    return out;
}

static PyObject *ChunkCounts_counts(ChunkCounts *c, PyObject *Py_UNUSED(ignored))
{
    PyObject *out = PyList_New((Py_ssize_t)c->n_entries);
    for (size_t i = 0; out && i < c->n_entries; i++) {
        PyObject *n = PyLong_FromUnsignedLongLong(c->entries[i].count);
        if (!n) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, n);
    }
    return out;
}

static PyObject *ChunkCounts_unique_bytes(ChunkCounts *c, void *Py_UNUSED(closure))
{
    return PyLong_FromSize_t(c->arena_len);
}

static PyObject *ChunkCounts_total_bytes(ChunkCounts *c, void *Py_UNUSED(closure))
{
    return PyLong_FromUnsignedLongLong(c->total_bytes);
}

static Py_ssize_t ChunkCounts_len(ChunkCounts *c)
{
    return (Py_ssize_t)c->n_entries;
}

static int ChunkCounts_init(ChunkCounts *c, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {NULL};
    return PyArg_ParseTupleAndKeywords(args, kwds, ":ChunkCounts", kwlist) ? 0 : -1;
}

static void ChunkCounts_dealloc(ChunkCounts *c)
{
    free(c->entries);
    free(c->table);
    free(c->arena);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyMethodDef ChunkCounts_methods[] = {
    {"split_gpt4", (PyCFunction)ChunkCounts_split_gpt4, METH_VARARGS,
     "split_gpt4(data, start, end) -> bool: count the chunks of data[start:end] under GPT-4's "
     "pattern if it is all ASCII (True); else count nothing (False)."},
    {"add", (PyCFunction)ChunkCounts_add, METH_O,
     "add(chunks): count each chunk (bytes, or str counted in UTF-8) once; empty ones are skipped."},
    {"add_counts", (PyCFunction)ChunkCounts_add_counts, METH_VARARGS,
     "add_counts(chunks, counts): count chunks[i] counts[i] more times, in order."},
    {"chunks", (PyCFunction)ChunkCounts_chunks, METH_NOARGS,
     "chunks() -> list of bytes: the distinct chunks in order of first occurrence."},
    {"counts", (PyCFunction)ChunkCounts_counts, METH_NOARGS,
     "counts() -> list of int: their occurrences, in the same order."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ChunkCounts_getset[] = {
    {"unique_bytes", (getter)ChunkCounts_unique_bytes, NULL, "the distinct chunks' bytes", NULL},
    {"total_bytes", (getter)ChunkCounts_total_bytes, NULL, "every chunk's bytes times its count", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods ChunkCounts_as_sequence = {
    .sq_length = (lenfunc)ChunkCounts_len,
};

static PyTypeObject ChunkCountsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tokexplorer.core.training._count.ChunkCounts",
    .tp_doc = "ChunkCounts(): distinct chunks and their occurrences, in order of first occurrence.",
    .tp_basicsize = sizeof(ChunkCounts),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)ChunkCounts_init,
    .tp_dealloc = (destructor)ChunkCounts_dealloc,
    .tp_methods = ChunkCounts_methods,
    .tp_getset = ChunkCounts_getset,
    .tp_as_sequence = &ChunkCounts_as_sequence,
};

static struct PyModuleDef count_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tokexplorer.core.training._count",
    .m_doc = "Counting a corpus's chunks for tokexplorer.core.training.counting, compiled (see _count.c).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__count(void)
{
    fill_kinds();
    if (PyType_Ready(&ChunkCountsType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&count_module);
    if (!module)
        return NULL;
    Py_INCREF(&ChunkCountsType);
    if (PyModule_AddObject(module, "ChunkCounts", (PyObject *)&ChunkCountsType) < 0) {
        Py_DECREF(&ChunkCountsType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
