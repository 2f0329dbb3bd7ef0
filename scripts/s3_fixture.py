"""Fills a moto S3 server for Imago's object-storage tests, with boto3.

    s3_fixture.py ENDPOINT BUCKET KEY=FILE ...

Creates an IAM user with an access key allowed every S3 action, a bucket,
and the objects; prints the user's key as JSON ({"accessKeyID", "secretAccessKey"}).
The server is started with INITIAL_NO_AUTH_ACTION_COUNT set to the number
of calls made here (3 IAM calls, the bucket, one a file), so that every
request after them has its signature checked; the last call here checks
that a wrong secret is refused, and fails the fixture if it is not.
"""

import json
import sys

import boto3
import botocore

endpoint, bucket, objects = sys.argv[1], sys.argv[2], sys.argv[3:]
setup = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
iam = boto3.client("iam", **setup)
iam.create_user(UserName="imago")
key = iam.create_access_key(UserName="imago")["AccessKey"]
policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
iam.put_user_policy(UserName="imago", PolicyName="s3", PolicyDocument=json.dumps(policy))
s3 = boto3.client("s3", **setup)
s3.create_bucket(Bucket=bucket)
for entry in objects:
    name, path = entry.split("=", 1)
    with open(path, "rb") as file:
        s3.put_object(Bucket=bucket, Key=name, Body=file.read())

wrong = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=key["AccessKeyId"],
                     aws_secret_access_key="wrong", config=botocore.config.Config(retries={"max_attempts": 1}))
try:
    wrong.list_objects_v2(Bucket=bucket)
    sys.exit("s3_fixture: a wrong secret was accepted: the server does not check signatures")
except botocore.exceptions.ClientError as error:
    if error.response["ResponseMetadata"]["HTTPStatusCode"] != 403:
        raise
print(json.dumps({"accessKeyID": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}))
