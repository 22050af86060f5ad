package plan

import "strings"

// sparkBuiltins are the names of Spark SQL's built-in functions (Spark's
// FunctionRegistry). A call of one the engine does not implement is
// refused as not supported, rather than reported as an unknown name.
var sparkBuiltins = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(sparkBuiltinNames) {
		m[n] = true
	}
	return m
}()

const sparkBuiltinNames = `
abs acos acosh add_months aes_decrypt aes_encrypt aggregate and any
any_value approx_count_distinct approx_percentile array array_agg
array_contains array_distinct array_except array_intersect array_join
array_max array_min array_position array_remove array_repeat array_size
array_sort array_union arrays_overlap arrays_zip ascii asin asinh
assert_true atan atan2 atanh avg base64 bigint bin binary bit_and bit_count
bit_get bit_length bit_or bit_xor bool_and bool_or boolean bround btrim
cardinality cast cbrt ceil ceiling char char_length character_length chr
coalesce collect_list collect_set concat concat_ws contains conv
convert_timezone corr cos cosh cot count count_if count_min_sketch covar_pop
covar_samp crc32 csc cume_dist current_catalog current_database current_date
current_timestamp current_timezone current_user date date_add date_format
date_from_unix_date date_part date_sub date_trunc datediff day dayofmonth
dayofweek dayofyear decimal decode degrees dense_rank div double e
element_at elt encode endswith equal_null every exists exp explode
explode_outer expm1 extract factorial filter find_in_set first first_value
flatten float floor forall format_number format_string from_csv from_json
from_unixtime from_utc_timestamp get_json_object getbit greatest grouping
grouping_id hash hex histogram_numeric hour hypot if ifnull ilike in initcap
inline inline_outer input_file_block_length input_file_block_start
input_file_name instr int isnan isnotnull isnull java_method
json_array_length json_object_keys json_tuple kurtosis lag last last_day
last_value lcase lead least left length levenshtein like ln localtimestamp
locate log log10 log1p log2 lower lpad ltrim make_date make_dt_interval
make_interval make_timestamp make_timestamp_ltz make_timestamp_ntz
make_ym_interval map map_concat map_contains_key map_entries map_filter
map_from_arrays map_from_entries map_keys map_values map_zip_with max max_by
md5 mean median min min_by minute mod monotonically_increasing_id month
months_between named_struct nanvl negative next_day not now nth_value ntile
nullif nvl nvl2 octet_length or overlay parse_url percent_rank percentile
percentile_approx pi pmod posexplode posexplode_outer position positive pow
power printf quarter radians raise_error rand randn random rank reflect
regexp regexp_extract regexp_extract_all regexp_like regexp_replace
regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx
regr_sxy regr_syy repeat replace reverse right rint rlike round row_number
rpad rtrim schema_of_csv schema_of_json sec second sentences sequence
session_window sha sha1 sha2 shiftleft shiftright shiftrightunsigned shuffle
sign signum sin sinh size skewness slice smallint some sort_array soundex
space spark_partition_id split split_part sqrt stack startswith std stddev
stddev_pop stddev_samp str_to_map string substr substring substring_index
sum tan tanh timestamp timestamp_micros timestamp_millis timestamp_seconds
tinyint to_binary to_char to_csv to_date to_json to_number to_timestamp
to_timestamp_ltz to_timestamp_ntz to_unix_timestamp to_utc_timestamp
transform transform_keys transform_values translate trim trunc try_add
try_avg try_divide try_element_at try_multiply try_subtract try_sum
try_to_binary try_to_char try_to_number typeof ucase unbase64 unhex
unix_date unix_micros unix_millis unix_seconds unix_timestamp upper user
uuid var_pop var_samp variance version weekday weekofyear when width_bucket
window xpath xpath_boolean xpath_double xpath_float xpath_int xpath_long
xpath_number xpath_short xpath_string xxhash64 year zip_with
`
