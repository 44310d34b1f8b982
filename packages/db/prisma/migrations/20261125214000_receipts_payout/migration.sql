-- AlterTable
ALTER TABLE "agents" ADD COLUMN     "payout_methods" JSONB;

-- CreateTable
CREATE TABLE "receipts" (
    "id" UUID NOT NULL,
    "expense_id" UUID NOT NULL,
    "group_id" UUID NOT NULL,
    "filename" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "size_bytes" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "storage" TEXT NOT NULL,
    "created_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "receipts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "receipt_contents" (
    "receipt_id" UUID NOT NULL,
    "content" BYTEA NOT NULL,

    CONSTRAINT "receipt_contents_pkey" PRIMARY KEY ("receipt_id")
);

-- CreateIndex
CREATE INDEX "receipts_expense_id_created_at_idx" ON "receipts"("expense_id", "created_at");

-- AddForeignKey
ALTER TABLE "receipts" ADD CONSTRAINT "receipts_expense_id_fkey" FOREIGN KEY ("expense_id") REFERENCES "expenses"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "receipt_contents" ADD CONSTRAINT "receipt_contents_receipt_id_fkey" FOREIGN KEY ("receipt_id") REFERENCES "receipts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
