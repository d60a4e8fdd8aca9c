/* llm_sample.h — the sampler's inside, for its tests: the candidate set a sampling step
 * draws from.
 *
 * Layer: llm runner. kiln_llm_sampler_sample (kiln/llm.h) is llm_sample_candidates followed
 * by one draw.
 */
#ifndef KILN_LLM_RUNNER_SAMPLE_H
#define KILN_LLM_RUNNER_SAMPLE_H

#include "kiln/llm.h"

/* Runs steps 1-5 of the sampler (kiln/llm.h) on logits and history and returns how many
 * candidates are left; ids[i] and probs[i] (the sampler's own memory, valid until its next
 * call) give them, most likely first, with their probabilities at the sampler's temperature
 * (summing to 1). A greedy sampler leaves one candidate of probability 1. 0 on NULL arguments. */
size_t llm_sample_candidates(kiln_llm_sampler *sampler, const float *logits, const int32_t *history,
                             size_t n_history, const int32_t **ids, const float **probs);

#endif
