#pragma once
// Every op of the model (src/model/ops/): each is a shader, its declaration here, and a row in the
// table of op cases (tests/ops/op_cases_test.cpp).
#include "model/ops/attention.h"
#include "model/ops/layer_norm.h"
#include "model/ops/log_sum_exp.h"
#include "model/ops/matmul.h"
#include "model/ops/pointwise.h"
#include "model/ops/sampler.h"
#include "model/ops/topk.h"
