/* Session arguments of the verbs that read several sessions (`merge`, `ranks`): each a session
 * file, a folder (its *.wlsession files) or a quoted glob ('job_*.wlsession'). */
#ifndef WARPLENS_TOOLS_SESSION_ARGS_H
#define WARPLENS_TOOLS_SESSION_ARGS_H

/* The paths, sorted within each argument, in *out (malloc'd strings, free with
 * session_args_free); skip: a path left out (the output of a merge), may be NULL. Returns the
 * count, or -1 after printing why (verb names the verb). */
int session_args_expand(const char *verb, char **args, int n, const char *skip, char ***out);
void session_args_free(char **v, int n);

#endif
