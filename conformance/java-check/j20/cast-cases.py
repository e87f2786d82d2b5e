"""The cast cases of core/src/types/cast/java_casts.tsv: prints FROM_TYPE<TAB>TO_TYPE<TAB>VALUE
lines for `gen.sh cast-probe` (see README.md)."""
import struct
def f32(x): return '%08x' % struct.unpack('<I', struct.pack('<f', x))[0]
def f64(x): return '%016x' % struct.unpack('<Q', struct.pack('<d', x))[0]
cases = []
def add(fr, to, *vals):
    for v in vals: cases.append((fr, to, v))
ints = ['0', '1', '-1', '127', '-128', '300', '-300', '70000', '2147483647', '-2147483648']
longs = ints + ['4294967296', '9223372036854775807', '-9223372036854775808', '1700000000', '-1700000000']
for to in ['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'FLOAT', 'DOUBLE', 'DECIMAL(5, 2)', 'DECIMAL(38, 10)', 'STRING', 'VARCHAR(3)', 'CHAR(6)', 'BOOLEAN', 'TIMESTAMP(3)', 'TIMESTAMP(0)', 'TIMESTAMP(6)', 'TIMESTAMP_LTZ(3)']:
    add('BIGINT', to, *longs)
    add('INT', to, *ints)
add('TINYINT', 'STRING', '-5', '127')
add('SMALLINT', 'INT', '-5', '32767')
add('TINYINT', 'TIMESTAMP(3)', '5')
floats = [0.0, -0.0, 1.5, -1.5, 0.1, 1e10, -1e10, 3.4e38, 1e-7, 123456789.0, float('nan'), float('inf'), float('-inf'), 2.5, -2.5, 0.125, 1e7, 9999999.0]
for to in ['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'DOUBLE', 'DECIMAL(10, 2)', 'DECIMAL(38, 18)', 'STRING', 'VARCHAR(4)', 'BOOLEAN']:
    add('FLOAT', to, *[f32(x) for x in floats])
for to in ['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'FLOAT', 'DECIMAL(10, 2)', 'DECIMAL(38, 18)', 'DECIMAL(5, 0)', 'STRING', 'CHAR(12)']:
    add('DOUBLE', to, *[f64(x) for x in floats + [1e300, 1e-300, 123.456, 0.005, 0.015, 1.0/3]])
decs = ['0', '1.25', '-1.25', '123.45', '-123.45', '999.99', '0.05', '-0.05', '0.01']
for to in ['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'FLOAT', 'DOUBLE', 'DECIMAL(5, 1)', 'DECIMAL(10, 4)', 'DECIMAL(3, 0)', 'DECIMAL(4, 3)', 'STRING', 'VARCHAR(4)', 'CHAR(8)', 'BOOLEAN']:
    add('DECIMAL(5, 2)', to, *decs)
bigdecs = ['12345678901234567890.123456789012345678', '-99999999999999999999999999999999999.999', '0.000000000000000001', '1']
for to in ['BIGINT', 'INT', 'DOUBLE', 'FLOAT', 'DECIMAL(20, 2)', 'DECIMAL(38, 0)', 'STRING']:
    add('DECIMAL(38, 18)' if not bigdecs[1].startswith('-9999') else 'DECIMAL(38, 3)', to, *bigdecs)
add('DECIMAL(38, 3)', 'BIGINT', '-99999999999999999999999999999999999.999', '12345678901234567890123.456')
add('DECIMAL(38, 3)', 'DOUBLE', '-99999999999999999999999999999999999.999', '12345678901234567890123.456')
for to in ['TINYINT', 'INT', 'BIGINT', 'FLOAT', 'DOUBLE', 'DECIMAL(5, 2)', 'STRING', 'VARCHAR(3)', 'CHAR(6)']:
    add('BOOLEAN', to, 'true', 'false')
strs = ['0', '12', '-12', '+12', ' 12', '12 ', '12.9', '-12.9', '.5', '12.', '1e3', 'abc', '', '-', '2147483648', '-2147483648', '9223372036854775808', '127', '128', '1.5e2', 'NaN', 'Infinity', '-Infinity', ' 3.5 ', '3.5f', '0x10', '1_000', 't', 'TRUE', 'yes', 'N', 'off', '00012']
for to in ['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'FLOAT', 'DOUBLE', 'DECIMAL(5, 2)', 'DECIMAL(38, 0)', 'BOOLEAN']:
    add('STRING', to, *strs)
dates = ['2024-01-05', '2024-1-5', '2024-02-29', '2023-02-29', '2024-02-30', '2024-04-31', '2024-12-31 23:59:59', '2024', '2024-03', ' 2024 - 03 - 04', '12345', '-1', '0', '10000-01-01', 'abc', '2024-13-01', '1969-12-31', '0001-01-01', '9999-12-31', '2024-01-05T10:00']
add('STRING', 'DATE', *dates)
times = ['12:34:56', '12:34:56.789', '12:34:56.7895', '1:2:3', '12:34', '12', '23:59:59.999', '12:00:00-01:30', '12:00:00+02', '3600000', '-5', 'abc', '25:00:00', '12:34:56.1', '00:00:00.0005']
add('STRING', 'TIME(3)', *times)
add('STRING', 'TIME(0)', '12:34:56.789')
tss = ['2024-01-05 12:34:56', '2024-01-05 12:34:56.123456789', '2024-1-5 3:4:5', '2024-01-05', '2024-02-30 01:02:03', '2024-02-31', '2023-02-29', '2024-01-05 12:34:56.', '2024-01-05 12:34', '2024-01-05T12:34:56', '1700000000', '-1700000000', '1700000000123', 'abc', '2024-13-05', '2024-01-05 24:00:00', '99999-01-01', '0001-01-01 00:00:00', '1969-12-31 23:59:59.999999']
for to in ['TIMESTAMP(0)', 'TIMESTAMP(3)', 'TIMESTAMP(6)', 'TIMESTAMP(9)', 'TIMESTAMP(4)', 'TIMESTAMP_LTZ(3)', 'TIMESTAMP_LTZ(6)']:
    add('STRING', to, *tss)
for to in ['BINARY(4)', 'VARBINARY(3)', 'BYTES', 'STRING', 'VARCHAR(3)', 'CHAR(5)']:
    add('STRING', to, 'ab', 'abcdef', '', 'héllo', '日本語テキスト')
    add('VARCHAR(10)', to, 'abcdefghij', 'x')
    add('CHAR(4)', to, 'ab  ', 'abcd')
for to in ['BINARY(4)', 'VARBINARY(3)', 'BYTES', 'STRING', 'VARCHAR(2)', 'CHAR(4)']:
    add('BYTES', to, '', '6162', '61626364656667', 'c3a9', 'ff00')
    add('BINARY(3)', to, '616263')
ts_vals = ['0,0', '1700000000123,456789', '-1,0', '-1,999999', '-1500,0', '-86400001,0', '1700000000000,0', '1700000000120,0', '253402300799999,999999', '-62135596800000,0', '-62135596800001,0', '1,100', '1000,1']
for fr in ['TIMESTAMP(0)', 'TIMESTAMP(3)', 'TIMESTAMP(6)', 'TIMESTAMP(9)', 'TIMESTAMP(2)', 'TIMESTAMP(7)', 'TIMESTAMP_LTZ(3)', 'TIMESTAMP_LTZ(9)']:
    for to in ['STRING', 'VARCHAR(10)', 'DATE', 'TIME(3)', 'TIME(0)', 'INT', 'BIGINT', 'TINYINT', 'DOUBLE', 'DECIMAL(10, 2)', 'TIMESTAMP(0)', 'TIMESTAMP(1)', 'TIMESTAMP(3)', 'TIMESTAMP(5)', 'TIMESTAMP(6)', 'TIMESTAMP(9)', 'TIMESTAMP_LTZ(3)', 'TIMESTAMP_LTZ(6)']:
        add(fr, to, *ts_vals)
date_vals = ['0', '-1', '19727', '-719162', '2932896', '-719163', '-800000', '3000000']
for to in ['STRING', 'VARCHAR(20)', 'TIMESTAMP(3)', 'TIMESTAMP(0)', 'TIMESTAMP_LTZ(6)', 'INT', 'TIME(3)']:
    add('DATE', to, *date_vals)
time_vals = ['0', '1', '45296789', '86399999', '45296000', '45296780', '45296700']
for fr in ['TIME(0)', 'TIME(3)', 'TIME(1)', 'TIME(2)']:
    for to in ['STRING', 'VARCHAR(20)', 'TIMESTAMP(3)', 'TIMESTAMP_LTZ(3)', 'TIME(3)', 'INT']:
        add(fr, to, *time_vals)
for c in cases:
    print('\t'.join(c))
